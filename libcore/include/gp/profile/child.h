#pragma once
// Child processes for gp-profile's stages: locate a gp tool, start it in its own process
// group (so a terminal's Ctrl-C reaches only gp-profile, and killing the group also reaches
// whatever the tool started, e.g. gp-runtime's profilers), wait with a deadline and a stop
// flag, and kill the group.
//
// Children get PR_SET_PDEATHSIG(SIGTERM): if gp-profile dies without cleaning up (SIGKILL),
// its stages end too.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gp/util/result.h"
#include "gp/util/subprocess.h"

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

// Starts the child through gp's one spawner (util::spawn) with the parent's environment, in
// its own group. Errors (missing program, unopenable redirection) are reported here, not as
// an exit status 127.
Result<pid_t> spawn(const ChildSpec& spec);

// The waits and group kills are the spawner's (gp/util/subprocess.h).
using ExitInfo = util::ExitStatus;
using util::WaitEnd;
using util::WaitResult;
inline WaitResult wait_child(pid_t pid, std::chrono::steady_clock::time_point deadline,
                             const std::atomic<bool>* stop,
                             const std::function<void()>& tick = nullptr) {
  return util::wait_until(pid, deadline, stop, tick);
}
inline ExitInfo kill_child(pid_t pid, std::chrono::milliseconds grace) {
  return util::kill_group(pid, grace);
}

// A whole file's bytes ("" when it cannot be read).
std::string read_text(const std::string& path);

// The last `max_lines` non-blank lines of a text file (a child's stderr).
std::vector<std::string> tail_lines(const std::string& path, size_t max_lines);

}  // namespace gp::profile
