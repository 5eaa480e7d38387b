// gp-profile -- COMMAND (gp/profile/command.h): gp-record's target and its start.
#include "gp/profile/command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace gp::profile {

Options options_for_command(const Options& options, const record::RecordedCommand& command) {
  Options o = options;
  o.pids.clear();
  o.cgroups.clear();
  if (!command.cgroup().empty()) o.cgroups = {command.cgroup()};
  else o.pids = {command.pid()};
  return o;
}

RecorderStart wait_attached(pid_t recorder, const std::string& output,
                            const std::atomic<bool>& stop) {
  for (;;) {
    if (::access(output.c_str(), F_OK) == 0) return RecorderStart::attached;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(recorder), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == recorder)
      return RecorderStart::exited;
    if (stop.load()) return RecorderStart::stopped;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace gp::profile
