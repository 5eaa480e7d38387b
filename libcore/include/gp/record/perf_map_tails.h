#pragma once
// PerfMapTails: copies of JIT perf maps (/tmp/perf-PID.map) taken while their processes run,
// each read going on where the previous one stopped (perf maps only grow). A process that exits
// mid-session takes its map out of reach (its /proc/PID/root goes with it), so gp-record copies
// the maps of processes whose samples ran in anonymous executable memory at every drain, and at
// the end of the session what was appended since. The archive's readers join the JitMap entries
// of one pid in order. Not thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::record {

class PerfMapTails {
 public:
  // The entries pid's perf map gained since the last call for the same process (a process is
  // pid and start time: a reused pid starts over); nullopt when it has no map, nothing new, or
  // has exited. Errors: a map that was refused or could not be read (proc/perf_map.h), once:
  // that process's map is not tried again.
  Result<std::optional<model::JitMap>> copy_new(int32_t pid, int32_t ns_pid, int64_t start_time_ns);
  // A new session: every map is copied whole again.
  void clear() { tails_.clear(); }
  // A process that was forgotten.
  void forget(int32_t pid) { tails_.erase(pid); }

 private:
  struct Tail {
    int64_t start_time_ns = 0;
    uint64_t offset = 0;  // bytes read so far (whole lines)
    bool refused = false;
  };
  std::unordered_map<int32_t, Tail> tails_;
};

}  // namespace gp::record
