#pragma once
// RecordedCommand: the program `gp-record -- COMMAND` runs and records. It is started held just
// before exec, in a cgroup v2 directory of its own (made under gp-record's cgroup), so that the
// recorder attaches first and then samples the command and every process it starts — forks and
// execs of its descendants land in the same cgroup — from the command's first instruction. The
// command shares gp-record's terminal, process group and standard streams.

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "gp/util/result.h"
#include "gp/util/subprocess.h"

namespace gp::record {

// The exit status of a tool whose command cannot be started, as shells report it.
inline constexpr int kExitCannotRun = 127;

class RecordedCommand {
 public:
  // Starts `argv` held (a bare name is looked up on PATH). When no cgroup can be made (not root,
  // no cgroup v2), cgroup() is empty and no_cgroup_reason() says why.
  static Result<RecordedCommand> start(const std::vector<std::string>& argv);
  RecordedCommand(RecordedCommand&& other) noexcept;
  RecordedCommand& operator=(RecordedCommand&&) = delete;
  // Kills a command still running and removes its cgroup.
  ~RecordedCommand();

  pid_t pid() const { return child_.pid; }
  const std::string& cgroup() const { return cgroup_; }
  const std::string& no_cgroup_reason() const { return no_cgroup_; }

  // Lets the command exec; an Error when it could not (the one line to show).
  Status release();
  // True once the command has exited (reaped here; never blocks).
  bool exited();
  // Blocks until the command exits.
  void wait();
  // Its status as a shell gives it: the exit code, or 128 + the signal that killed it.
  int exit_code() const;
  const util::ExitStatus& status() const { return status_; }

 private:
  RecordedCommand() = default;
  void remove_cgroup();

  util::Child child_;
  std::string cgroup_;
  std::string no_cgroup_;
  bool released_ = false;
  bool reaped_ = false;
  util::ExitStatus status_;
};

// For a SIGINT/SIGTERM handler (async-signal-safe): sends `sig` on to the running command,
// unless the kernel sent it — a terminal's ^C or ^\ already reached the command, which is in
// gp-record's process group. Does nothing when no command runs.
void forward_to_command(int sig, const siginfo_t* info);

// The cgroup v2 directory of the calling process ("" when there is no cgroup v2 hierarchy), from
// /proc/self/mountinfo and /proc/self/cgroup.
std::string own_cgroup_dir();

}  // namespace gp::record
