// PerfMapTails: incremental copies of JIT perf maps for gp-record.
#include "gp/record/perf_map_tails.h"

#include "gp/proc/perf_map.h"

namespace gp::record {

Result<std::optional<model::JitMap>> PerfMapTails::copy_new(int32_t pid, int32_t ns_pid,
                                                            int64_t start_time_ns) {
  auto [it, inserted] = tails_.try_emplace(pid, Tail{start_time_ns, 0, false});
  Tail& tail = it->second;
  if (!inserted && tail.start_time_ns != start_time_ns) tail = Tail{start_time_ns, 0, false};
  // One cap for the whole file, as a single copy would have: a runaway map stops growing here.
  if (tail.refused || tail.offset >= proc::kDefaultPerfMapMaxBytes)
    return std::optional<model::JitMap>();
  proc::PerfMapStats stats;
  auto map = proc::copy_perf_map(pid, ns_pid, proc::kDefaultPerfMapMaxBytes - tail.offset, &stats,
                                 "/proc", tail.offset);
  if (!map) {
    const std::string& why = map.error().message;
    if (why.find("not found") != std::string::npos ||
        why.find("process exited") != std::string::npos)
      return std::optional<model::JitMap>();
    tail.refused = true;
    return map.error();
  }
  tail.offset = stats.next_offset;
  if (map->entries.empty()) return std::optional<model::JitMap>();
  return std::optional<model::JitMap>(std::move(*map));
}

}  // namespace gp::record
