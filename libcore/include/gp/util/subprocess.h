#pragma once
// The one child-process spawner of gp. Every tool that starts another program (gp-runtime's
// profilers, gp-profile's stages, gp-import's perf) goes through spawn(); the waits, group
// kills and the captured run are built on it.
//
// spawn() forks and execs with only async-signal-safe calls in the child (callers have
// threads). A program that cannot be started (not found, not executable, an output file that
// cannot be created, a working directory that does not exist) is an Error from spawn(), never
// an exit status 127: the child reports its failure through a close-on-exec pipe. The child
// gets the descriptors it is given on 0, 1 and 2 and none other, every signal unblocked, and
// SIGPIPE, SIGINT and SIGTERM back to their defaults (gp tools ignore SIGPIPE, and ignored
// signals survive exec).

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

namespace gp::util {

// Where one of the child's standard streams goes.
struct Stdio {
  enum class Kind { null, inherit, pipe, file, fd };
  Kind kind = Kind::null;
  std::string path;  // file: stdin opened read-only; stdout/stderr created/truncated, mode 0644
  int fd = -1;       // fd: duplicated onto the stream (the caller keeps its own)

  static Stdio null() { return {}; }
  static Stdio inherit() { return {Kind::inherit, {}, -1}; }
  static Stdio pipe() { return {Kind::pipe, {}, -1}; }  // the parent reads it (Child::out/err)
  static Stdio file(std::string path) { return {Kind::file, std::move(path), -1}; }
  static Stdio from_fd(int fd) { return {Kind::fd, {}, fd}; }
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  // The child's whole environment ("NAME=value"); nullopt: the parent's own.
  std::optional<std::vector<std::string>> env;
  std::string cwd;  // empty: the parent's
  Stdio in = Stdio::null();
  Stdio out = Stdio::null();
  Stdio err = Stdio::null();
  bool new_process_group = true;     // its own group, so kill_group() reaches what it starts
  int parent_death_signal = 0;       // PR_SET_PDEATHSIG (tied to the calling thread); 0 = none
  uint64_t address_space_bytes = 0;  // RLIMIT_AS; 0 = no limit
  uint64_t cpu_seconds = 0;          // RLIMIT_CPU; 0 = no limit
  // The child stops just before exec until release() (a recorder attaches to it first, or moves
  // it into a cgroup): spawn() then returns without knowing whether exec will succeed.
  bool hold = false;
};

// A started child. out/err are the read ends of Stdio::pipe() streams (else -1); whoever holds
// the Child closes them and reaps the pid.
struct Child {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  // A held child (SpawnOptions::hold): the pipes release() writes and reads, and the program.
  int release = -1;
  int report = -1;
  std::string program;
};

Result<Child> spawn(const SpawnOptions& options);

// Lets a held child exec. An Error (and the child reaped) when exec failed; closing `release`
// without calling it makes the child exit with status 127 instead.
Status release(Child& child);

// The absolute path of `name` on PATH (or `name` itself when it contains '/' and is
// executable); empty when not found.
std::string find_program(std::string_view name);

struct ExitStatus {
  int code = -1;   // exit status when the child exited
  int signal = 0;  // terminating signal, else 0
  bool ok() const { return signal == 0 && code == 0; }
  // "exit status 1", "killed by signal 9 (Killed)".
  std::string describe() const;
  static ExitStatus from_wait_status(int status);
};

// Blocks until `pid` exits and reaps it.
ExitStatus wait_exit(pid_t pid);

enum class WaitEnd { exited, deadline, stopped };
struct WaitResult {
  WaitEnd end = WaitEnd::exited;
  ExitStatus status;  // meaningful when end == exited
};

// Waits until the child exits, `deadline` passes or `*stop` turns true (checked every ~20 ms;
// `stop` may be null). `tick` (optional) runs about once per second while waiting. A child
// that has not exited is left running: the caller kills it.
WaitResult wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>* stop, const std::function<void()>& tick = nullptr);

// SIGTERM to the child's process group, SIGKILL to it after `grace`, then reaps the child.
ExitStatus kill_group(pid_t pid, std::chrono::milliseconds grace);

// A run to completion with both output streams captured (run()).
struct RunLimits {
  std::chrono::milliseconds timeout{30000};    // then SIGKILL to the whole group
  std::size_t max_output_bytes = 16u << 20;    // per stream; the rest is read and dropped
  int stop_signal = SIGINT;                    // sent to the group when `stop` is requested
  std::chrono::milliseconds stop_grace{3000};  // then SIGKILL
};

struct RunResult {
  pid_t pid = 0;
  int exit_code = -1;   // the child's exit status when it exited, else -1
  int term_signal = 0;  // the signal that ended it, else 0
  bool timed_out = false;
  bool stopped = false;  // `stop` was requested while it ran
  std::string out;
  std::string err;
  bool out_truncated = false;
  bool err_truncated = false;
  std::chrono::milliseconds elapsed{0};

  bool success() const { return exit_code == 0 && !timed_out; }
  // "exited with status 1", "killed by signal 9 (timed out after 5 s)", ... for error frames.
  std::string describe() const;
};

// Spawns `options` (its out and err become pipes) in its own process group and reads both
// streams until the child ends, the timeout passes or `stop` is requested. An Error only when
// the child could not be started.
Result<RunResult> run(SpawnOptions options, const RunLimits& limits, std::stop_token stop = {});

}  // namespace gp::util
