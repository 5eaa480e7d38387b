#pragma once
// Process-level pieces of gp-profile (gprofiler.md §9.4): the single-instance lock, the pid
// file and the session schedule of --continuous.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "gp/util/result.h"

namespace gp::profile {

// Holds the abstract unix socket "\0<name>" bound while alive: a second process asking for
// the same name fails (EADDRINUSE), and the kernel releases it when the process dies, so a
// crash never leaves a stale lock. gProfiler binds "\0gprofiler_lock" in the init network
// namespace; this binds in the caller's namespace (containers that share the host network
// see each other, as with gProfiler's --net=host deployments).
class InstanceLock {
 public:
  static Result<InstanceLock> acquire(const std::string& name);
  InstanceLock(InstanceLock&& other) noexcept;
  InstanceLock& operator=(InstanceLock&&) = delete;
  InstanceLock(const InstanceLock&) = delete;
  ~InstanceLock();

 private:
  explicit InstanceLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Writes "<pid>\n" to `path` (atomically, through a temporary file) and removes it on
// destruction if it still names this process.
class PidFile {
 public:
  static Result<PidFile> create(const std::string& path);
  PidFile(PidFile&& other) noexcept;
  PidFile& operator=(PidFile&&) = delete;
  PidFile(const PidFile&) = delete;
  ~PidFile();

 private:
  PidFile(std::string path, pid_t pid) : path_(std::move(path)), pid_(pid) {}
  std::string path_;
  pid_t pid_ = 0;
};

// gProfiler's continuous loop waits max(duration - elapsed, 0) after a session: the next
// session starts `duration` after the previous one started, or at once when processing took
// longer than that.
std::chrono::steady_clock::time_point next_session_start(
    std::chrono::steady_clock::time_point previous_start, std::chrono::seconds duration,
    std::chrono::steady_clock::time_point now);

// True when at least one of `pids` is a live process (kill(pid, 0) succeeds or says EPERM).
bool any_alive(const std::vector<int>& pids);

}  // namespace gp::profile
