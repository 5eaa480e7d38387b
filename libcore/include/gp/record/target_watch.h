#pragma once
// TargetWatch: whether any of the processes and threads a recording was asked for (-p, -t) still
// runs. perf record -p ends when its targets are gone; so does gp-record, instead of recording
// an idle machine's nothing until its duration ends, or for ever without one. Each target is
// known by its id and start time, so a new process that takes the id of one that exited is not
// taken for it.

#include <cstdint>
#include <string>
#include <vector>

namespace gp::record {

class TargetWatch {
 public:
  // The ids' start times are read now; an id already gone counts as exited.
  explicit TargetWatch(const std::vector<int32_t>& ids, std::string proc_root = "/proc");
  // True while one of them runs (the same process or thread as at the start).
  bool any_alive() const;

 private:
  struct Target {
    int32_t id;
    uint64_t start_ticks;
  };
  std::vector<Target> targets_;
  std::string proc_root_;
};

}  // namespace gp::record
