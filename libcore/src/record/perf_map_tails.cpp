// PerfMapTails: incremental copies of JIT perf maps for gp-record.
#include "gp/record/perf_map_tails.h"

#include <algorithm>

namespace gp::record {

bool PerfMapTails::pin(int32_t pid) {
  auto identity = proc::tmp_dir_identity(pid, proc_root_);
  auto uids = proc::process_uids(pid, proc_root_);
  if (!identity || !uids) return false;
  std::weak_ptr<proc::TmpDir>& shared = tmp_dirs_[*identity];
  std::shared_ptr<proc::TmpDir> tmp = shared.lock();
  if (!tmp) {
    auto opened = proc::open_tmp_dir(pid, proc_root_);
    if (!opened) {
      tmp_dirs_.erase(*identity);
      return false;
    }
    tmp = std::move(*opened);
    shared = tmp;
  }
  pins_[pid] = Pin{std::move(tmp), std::move(*uids)};
  return true;
}

void PerfMapTails::forget(int32_t pid) {
  tails_.erase(pid);
  if (pins_.erase(pid) == 0) return;
  std::erase_if(tmp_dirs_, [](const auto& entry) { return entry.second.expired(); });
}

size_t PerfMapTails::open_tmp_dirs() const {
  return static_cast<size_t>(
      std::count_if(tmp_dirs_.begin(), tmp_dirs_.end(),
                    [](const auto& entry) { return !entry.second.expired(); }));
}

Result<std::optional<model::JitMap>> PerfMapTails::copy_new(int32_t pid, int32_t ns_pid,
                                                            int64_t start_time_ns) {
  auto [it, inserted] = tails_.try_emplace(pid, Tail{start_time_ns, 0, false});
  Tail& tail = it->second;
  if (!inserted && tail.start_time_ns != start_time_ns) tail = Tail{start_time_ns, 0, false};
  // One cap for the whole file, as a single copy would have: a runaway map stops growing here.
  if (tail.refused || tail.offset >= proc::kDefaultPerfMapMaxBytes)
    return std::optional<model::JitMap>();
  const size_t cap = proc::kDefaultPerfMapMaxBytes - tail.offset;
  proc::PerfMapStats stats;
  // A live process is read through its /proc entry (its uids now: it may have changed them);
  // one that exited through its pin.
  auto map = proc::copy_perf_map(pid, ns_pid, cap, &stats, proc_root_, tail.offset);
  const bool exited = !map && map.error().message == "process exited";
  if (auto pin = pins_.find(pid); exited && pin != pins_.end())
    map = proc::copy_perf_map_in(*pin->second.tmp, pin->second.uids, pid, ns_pid, cap, &stats,
                                 tail.offset);
  if (!map) {
    const std::string& why = map.error().message;
    if (why == "not found" || why == "process exited") return std::optional<model::JitMap>();
    tail.refused = true;
    return map.error();
  }
  tail.offset = stats.next_offset;
  if (map->entries.empty()) return std::optional<model::JitMap>();
  return std::optional<model::JitMap>(std::move(*map));
}

}  // namespace gp::record
