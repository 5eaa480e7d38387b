#include "gp/record/target_watch.h"

#include <utility>

#include "gp/proc/process.h"

namespace gp::record {

TargetWatch::TargetWatch(const std::vector<int32_t>& ids, std::string proc_root)
    : proc_root_(std::move(proc_root)) {
  for (int32_t id : ids)
    if (auto ticks = proc::process_start_ticks(id, proc_root_)) targets_.push_back({id, *ticks});
}

bool TargetWatch::any_alive() const {
  for (const Target& t : targets_) {
    auto ticks = proc::process_start_ticks(t.id, proc_root_);
    if (ticks && *ticks == t.start_ticks) return true;
  }
  return false;
}

}  // namespace gp::record
