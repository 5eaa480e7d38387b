#pragma once
// What gp's own interpreter samplers (CPython, Ruby, PHP) share when they turn snapshots into a
// Profile: gProfiler's frequency limit per profiler, samples counted by thread and stack, and the
// error frame and warning of a process that went away or whose stacks kept changing.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gp/runtime/adapter.h"
#include "runtime/remote/remote_memory.h"

namespace gp::runtime::remote {

// The session's frequency, at most `max` (gProfiler's limit for this runtime's profiler); a
// warning naming `runtime` goes in out.warnings when more was asked for.
int limited_frequency(const SessionParams& params, int max, std::string_view runtime, Profile& out);

// Samples of one process counted by thread and frames; each thread's name is read once.
class StackCounter {
 public:
  explicit StackCounter(pid_t pid) : pid_(pid) {}
  // One sample of thread `tid` (0: unknown) with `frames`, root first.
  void add(int32_t tid, std::vector<Frame> frames);
  std::vector<Stack> take();

 private:
  using Key =
      std::tuple<int32_t,
                 std::vector<std::tuple<int, std::string, std::string, uint32_t, uint32_t>>>;
  pid_t pid_;
  std::map<Key, Stack> stacks_;
  std::map<int32_t, std::string> names_;
};

// gProfiler's error frame for a walk that ended because the process went down (gone) or its
// memory became unreadable (denied).
std::string lost_process_frame(WalkStatus status);

// "N of M <runtime> samples were dropped (<why>)" when more than a tenth of the snapshots were
// given up; nullopt otherwise.
std::optional<std::string> dropped_samples_warning(uint64_t given_up, uint64_t snapshots,
                                                   std::string_view runtime, std::string_view why);

}  // namespace gp::runtime::remote
