#pragma once
// Child processes for gp-profile's stages: locate a gp tool, start it in its own process
// group (so a terminal's Ctrl-C reaches only gp-profile, and killing the group also reaches
// whatever the tool started, e.g. gp-runtime's profilers), wait with a deadline and a stop
// flag, and kill the group.
//
// Children get PR_SET_PDEATHSIG(SIGTERM): if gp-profile dies without cleaning up (SIGKILL),
// its stages end too. Not thread-safe with respect to other fork()ing threads' fds.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gp/util/result.h"

namespace gp::profile {

// Where the tool `name` is: next to `self_exe` (the running gp-profile, /proc/self/exe) when
// an executable of that name is there, else the first match on `path` (PATH syntax).
std::optional<std::string> find_tool(const std::string& name, const std::string& self_exe,
                                     const std::string& path);

struct ChildSpec {
  std::string program;            // path of the executable
  std::vector<std::string> args;  // argv[1..]
  std::string stdout_path = "/dev/null";
  std::string stderr_path = "/dev/null";  // truncated
};

// Starts the child. Errors (missing program, unopenable redirection) are reported here, not
// as an exit status 127, through a close-on-exec pipe.
Result<pid_t> spawn(const ChildSpec& spec);

struct ExitInfo {
  int code = -1;   // exit status when the child exited
  int signal = 0;  // terminating signal, else 0
  bool ok() const { return signal == 0 && code == 0; }
  // "exit status 1", "killed by signal 9 (Killed)".
  std::string describe() const;
};

enum class WaitEnd { exited, deadline, stopped };
struct WaitResult {
  WaitEnd end = WaitEnd::exited;
  ExitInfo status;  // meaningful when end == exited
};

// Waits until the child exits, `deadline` passes or `*stop` turns true (checked every ~20 ms;
// `stop` may be null). `tick` (optional) runs about once per second while waiting. A child
// that has not exited is left running: the caller kills it.
WaitResult wait_child(pid_t pid, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>* stop, const std::function<void()>& tick = nullptr);

// SIGTERM to the child's process group, SIGKILL to it after `grace`, then reaps the child.
ExitInfo kill_child(pid_t pid, std::chrono::milliseconds grace);

// The last `max_lines` non-blank lines of a text file (a child's stderr).
std::vector<std::string> tail_lines(const std::string& path, size_t max_lines);

}  // namespace gp::profile
