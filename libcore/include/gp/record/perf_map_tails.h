#pragma once
// PerfMapTails: copies of JIT perf maps (/tmp/perf-PID.map) taken while their processes run,
// each read going on where the previous one stopped (perf maps only grow). gp-record copies the
// maps of processes whose samples ran in anonymous executable memory at every drain, and at the
// end of the session what was appended since. The archive's readers join the JitMap entries of
// one pid in order.
//
// A process that exits takes its /proc/PID/root with it, and a container's /tmp may be out of
// reach from the host. So each process is pinned when it is snapshotted (it lives then): its
// /tmp is held open (one descriptor per distinct /tmp directory, shared by the processes that
// see it), with its uids for the owner check, and a drain after its exit still copies its map.
// Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "gp/model/session.h"
#include "gp/proc/perf_map.h"
#include "gp/util/result.h"

namespace gp::record {

class PerfMapTails {
 public:
  explicit PerfMapTails(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}

  // Holds pid's /tmp and uids from now until forget(pid) (again after an exec: a new image may
  // run in another namespace). False when pid is gone or its /tmp cannot be opened.
  bool pin(int32_t pid);
  // The entries pid's perf map gained since the last call for the same process (a process is
  // pid and start time: a reused pid starts over); nullopt when it has no map, nothing new, or
  // has exited unpinned. Errors: a map that was refused or could not be read
  // (proc/perf_map.h), once: that process's map is not tried again.
  Result<std::optional<model::JitMap>> copy_new(int32_t pid, int32_t ns_pid, int64_t start_time_ns);
  // A new session: every map is copied whole again (pins stay).
  void clear() { tails_.clear(); }
  // A process that was forgotten: its tail and pin go.
  void forget(int32_t pid);
  // Descriptors held open for pins (one per distinct /tmp).
  size_t open_tmp_dirs() const;

 private:
  struct Tail {
    int64_t start_time_ns = 0;
    uint64_t offset = 0;  // bytes read so far (whole lines)
    bool refused = false;
  };
  struct Pin {
    std::shared_ptr<proc::TmpDir> tmp;
    std::set<uint32_t> uids;
  };
  std::string proc_root_;
  std::unordered_map<int32_t, Tail> tails_;
  std::unordered_map<int32_t, Pin> pins_;
  std::map<proc::TmpDirIdentity, std::weak_ptr<proc::TmpDir>> tmp_dirs_;
};

}  // namespace gp::record
