// The one child-process spawner (gp/util/subprocess.h): fork/exec with start-up errors
// reported through a close-on-exec pipe, waits, group kills and the captured run.
#include "gp/util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace gp::util {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<char*> c_array(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// What the child reports on the pipe when it cannot reach exec.
enum Stage : int { kExec = 0, kStdin = 1, kStdout = 2, kStderr = 3, kRedirect = 4, kCwd = 5 };

// Everything the child needs, prepared before fork (no allocation after it).
struct Prepared {
  const SpawnOptions* o = nullptr;
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stream_fd[3] = {-1, -1, -1};  // pipe write ends / caller fds, by stream
  int hold = -1;                     // the release pipe's read end (SpawnOptions::hold)
  int hold_write = -1;               // and its write end, which the child closes
  pid_t parent = 0;
};

// In the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const Prepared& p, int report) {
  // A parent started with 0, 1 or 2 closed may have got the report pipe there: it moves up
  // before the standard streams are set.
  if (report <= 2) {
    const int moved = ::fcntl(report, F_DUPFD_CLOEXEC, 3);
    if (moved < 0) ::_exit(127);
    report = moved;
  }
  // The release pipe's read end too; its write end is the parent's alone (EOF: give up).
  int hold = p.hold;
  if (hold >= 0) {
    ::close(p.hold_write);
    if (hold <= 2) {
      hold = ::fcntl(hold, F_DUPFD_CLOEXEC, 3);
      if (hold < 0) ::_exit(127);
    }
  }
  auto fail = [&report](int stage) {
    int msg[2] = {stage, errno};
    (void)!::write(report, msg, sizeof msg);
    ::_exit(127);
  };
  const SpawnOptions& o = *p.o;
  if (o.new_process_group) ::setpgid(0, 0);
  if (o.parent_death_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, o.parent_death_signal);
    if (::getppid() != p.parent) ::_exit(127);  // the parent already died
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  const Stdio* streams[3] = {&o.in, &o.out, &o.err};
  int source[3] = {-1, -1, -1};
  for (int i = 0; i < 3; ++i) {
    const Stdio& s = *streams[i];
    switch (s.kind) {
      case Stdio::Kind::inherit:
        break;
      case Stdio::Kind::null:
        source[i] = ::open("/dev/null", i == 0 ? O_RDONLY : O_WRONLY);
        if (source[i] < 0) fail(kRedirect);
        break;
      case Stdio::Kind::file:
        source[i] = i == 0 ? ::open(s.path.c_str(), O_RDONLY)
                           : ::open(s.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (source[i] < 0) fail(kStdin + i);
        break;
      case Stdio::Kind::pipe:
      case Stdio::Kind::fd:
        source[i] = p.stream_fd[i];
        break;
    }
  }
  // Sources are moved out of 0..2 first, so that one stream's dup2 cannot clobber another's
  // source (a parent started with a closed stdin gets /dev/null on fd 0 above).
  for (int i = 0; i < 3; ++i) {
    if (source[i] >= 0 && source[i] <= 2) {
      source[i] = ::fcntl(source[i], F_DUPFD_CLOEXEC, 3);
      if (source[i] < 0) fail(kRedirect);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (source[i] >= 0 && ::dup2(source[i], i) < 0) fail(kRedirect);
  }
  if (hold >= 0) {  // released by one byte; the parent's end closed without it: give up
    char go = 0;
    ssize_t n;
    do n = ::read(hold, &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(127);
  }
  // No other descriptor reaches the program (the report pipe closes itself at exec).
  if (report > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(report - 1), 0u);
  ::syscall(SYS_close_range, static_cast<unsigned>(report + 1), ~0u, 0u);
  if (o.address_space_bytes != 0) {
    rlimit lim{o.address_space_bytes, o.address_space_bytes};
    ::setrlimit(RLIMIT_AS, &lim);
  }
  if (o.cpu_seconds != 0) {
    rlimit lim{o.cpu_seconds, o.cpu_seconds + 1};
    ::setrlimit(RLIMIT_CPU, &lim);
  }
  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) fail(kCwd);
  ::execve(p.program, p.argv, p.envp);
  fail(kExec);
  ::_exit(127);  // not reached: fail() exits
}

std::string start_error(const SpawnOptions& o, const std::string& program, int stage, int err) {
  std::string why = std::strerror(err);
  switch (stage) {
    case kStdin:
      return "cannot open '" + o.in.path + "': " + why;
    case kStdout:
      return "cannot create '" + o.out.path + "': " + why;
    case kStderr:
      return "cannot create '" + o.err.path + "': " + why;
    case kRedirect:
      return "cannot redirect output of '" + program + "': " + why;
    case kCwd:
      return "cannot change directory to '" + o.cwd + "': " + why;
    default:
      return "cannot run '" + program + "': " + why;
  }
}

struct Sink {
  int fd = -1;
  std::string* text = nullptr;
  bool* truncated = nullptr;
};

// Reads what is ready; returns false at EOF or error (the fd is closed then).
bool drain(Sink& s, std::size_t limit) {
  char buf[16384];
  ssize_t n = ::read(s.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    close_fd(s.fd);
    return false;
  }
  std::size_t room = limit > s.text->size() ? limit - s.text->size() : 0;
  std::size_t take = std::min<std::size_t>(room, static_cast<std::size_t>(n));
  s.text->append(buf, take);
  if (take < static_cast<std::size_t>(n)) *s.truncated = true;
  return true;
}

// Reaps the child if it ended. Its group is killed first, while the zombie still holds the
// pid (so the group id cannot have been reused): helpers it left behind go with it.
bool reap(RunResult& r) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(r.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != r.pid) {
    return false;
  }
  ::kill(-r.pid, SIGKILL);
  int status = 0;
  if (::waitpid(r.pid, &status, 0) != r.pid) return false;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return true;
}

// Reads whatever the open pipes have within `wait`.
void pump(Sink (&sinks)[2], std::size_t limit, int wait_ms) {
  pollfd fds[2];
  Sink* owners[2];
  nfds_t n = 0;
  for (auto& s : sinks) {
    if (s.fd < 0) continue;
    owners[n] = &s;
    fds[n++] = {s.fd, POLLIN, 0};
  }
  if (n == 0) {
    ::poll(nullptr, 0, wait_ms);
    return;
  }
  if (::poll(fds, n, wait_ms) <= 0) return;
  for (nfds_t i = 0; i < n; ++i) {
    if (fds[i].revents != 0) drain(*owners[i], limit);
  }
}

// Pumps the pipes until both close and the child is reaped, enforcing timeout and stop.
void supervise(const RunLimits& o, RunResult& r, Sink (&sinks)[2], std::stop_token stop) {
  const auto start = Clock::now();
  const auto deadline = start + o.timeout;
  Clock::time_point kill_at = Clock::time_point::max();
  Clock::time_point drain_until = Clock::time_point::max();
  bool exited = false;
  bool killed = false;
  while (sinks[0].fd >= 0 || sinks[1].fd >= 0 || !exited) {
    pump(sinks, o.max_output_bytes, 50);
    const auto now = Clock::now();
    if (!exited && reap(r)) {
      exited = true;
      // A pipe still held by something that left the group is read for one more second only.
      drain_until = now + std::chrono::seconds(1);
    }
    if (exited) {
      if (now >= drain_until) break;
      continue;
    }
    if (!r.stopped && stop.stop_requested()) {
      r.stopped = true;
      ::kill(-r.pid, o.stop_signal);
      kill_at = std::min(kill_at, now + o.stop_grace);
    }
    if (now >= deadline && !r.timed_out) {
      r.timed_out = true;
      kill_at = now;
    }
    if (now >= kill_at && !killed) {
      ::kill(-r.pid, SIGKILL);
      killed = true;
    }
  }
  for (auto& s : sinks) close_fd(s.fd);
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

std::string find_program(std::string_view name) {
  if (name.empty()) return {};
  std::string n(name);
  if (n.find('/') != std::string::npos) return is_executable_file(n) ? n : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr && *path != '\0' ? path : kDefaultPath;
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    std::size_t end = dirs.find(':', pos);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(pos, end - pos);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + n;
      if (is_executable_file(candidate)) return candidate;
    }
    pos = end + 1;
  }
  return {};
}

Result<Child> spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return make_error("no command to run");
  const std::string& name = o.argv[0];
  // A path is exec'ed as it is (its errno is the message); a bare name is looked up on PATH.
  std::string program = name.find('/') != std::string::npos ? name : find_program(name);
  if (program.empty()) return make_error("cannot run '" + name + "': not found on PATH");
  if (o.in.kind == Stdio::Kind::pipe) return make_error("a child's stdin cannot be a pipe");
  std::vector<std::string> argv_s = o.argv;
  std::vector<std::string> env_s;
  if (o.env) env_s = *o.env;
  auto argv = c_array(argv_s);
  auto envp = c_array(env_s);

  Child child;
  Prepared p;
  p.o = &o;
  p.program = program.c_str();
  p.argv = argv.data();
  p.envp = o.env ? envp.data() : environ;
  p.parent = ::getpid();
  int write_end[3] = {-1, -1, -1};
  auto close_all = [&] {
    for (int& fd : write_end) close_fd(fd);
    close_fd(child.out);
    close_fd(child.err);
  };
  const Stdio* streams[3] = {&o.in, &o.out, &o.err};
  for (int i = 0; i < 3; ++i) {
    if (streams[i]->kind == Stdio::Kind::fd) p.stream_fd[i] = streams[i]->fd;
    if (streams[i]->kind != Stdio::Kind::pipe) continue;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      int e = errno;
      close_all();
      return make_error(std::string("pipe: ") + std::strerror(e));
    }
    (i == 1 ? child.out : child.err) = fds[0];
    write_end[i] = p.stream_fd[i] = fds[1];
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    int e = errno;
    close_all();
    return make_error(std::string("pipe: ") + std::strerror(e));
  }
  int hold[2] = {-1, -1};
  if (o.hold && ::pipe2(hold, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    close_all();
    return make_error(std::string("pipe: ") + std::strerror(e));
  }
  p.hold = hold[0];
  p.hold_write = hold[1];
  child.pid = ::fork();
  if (child.pid == 0) exec_child(p, report[1]);
  const int fork_errno = errno;
  ::close(report[1]);
  if (o.hold) ::close(hold[0]);
  for (int& fd : write_end) close_fd(fd);
  if (child.pid < 0) {
    ::close(report[0]);
    if (o.hold) ::close(hold[1]);
    close_all();
    return make_error(std::string("fork: ") + std::strerror(fork_errno));
  }
  // Also from the parent, so that kill(-pid) works at once (fails harmlessly after exec).
  if (o.new_process_group) ::setpgid(child.pid, child.pid);
  if (o.hold) {
    child.release = hold[1];
    child.report = report[0];
    child.program = program;
    return child;
  }
  int msg[2];
  ssize_t n;
  do n = ::read(report[0], msg, sizeof msg);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n != static_cast<ssize_t>(sizeof msg)) return child;  // exec succeeded
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  close_all();
  return make_error(start_error(o, program, msg[0], msg[1]));
}

Status release(Child& child) {
  if (child.release < 0 || child.report < 0) return make_error("the child is not held");
  const char go = 1;
  ssize_t n;
  do n = ::write(child.release, &go, 1);
  while (n < 0 && errno == EINTR);
  close_fd(child.release);
  int msg[2];
  do n = ::read(child.report, msg, sizeof msg);
  while (n < 0 && errno == EINTR);
  close_fd(child.report);
  if (n != static_cast<ssize_t>(sizeof msg)) return ok_status();  // exec succeeded
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  close_fd(child.out);
  close_fd(child.err);
  return make_error(msg[0] == kExec ? "cannot run '" + child.program + "': " + std::strerror(msg[1])
                                    : "cannot start '" + child.program + "': " + std::strerror(msg[1]));
}

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus e;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

std::string ExitStatus::describe() const {
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exit status " + std::to_string(code);
}

ExitStatus wait_exit(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r != pid) return {};
  return ExitStatus::from_wait_status(status);
}

WaitResult wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>* stop, const std::function<void()>& tick) {
  using namespace std::chrono;
  auto next_tick = steady_clock::now() + seconds(1);
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return {WaitEnd::exited, ExitStatus::from_wait_status(status)};
    if (r < 0 && errno != EINTR) return {WaitEnd::exited, ExitStatus{}};  // not our child
    if (stop != nullptr && stop->load()) return {WaitEnd::stopped, {}};
    auto now = steady_clock::now();
    if (now >= deadline) return {WaitEnd::deadline, {}};
    if (tick && now >= next_tick) {
      tick();
      next_tick += seconds(1);
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

ExitStatus kill_group(pid_t pid, std::chrono::milliseconds grace) {
  ::kill(-pid, SIGTERM);
  ::kill(pid, SIGTERM);  // in case it left its group
  auto result = wait_until(pid, std::chrono::steady_clock::now() + grace, nullptr);
  if (result.end == WaitEnd::exited) {
    ::kill(-pid, SIGKILL);  // grandchildren that outlived the child
    return result.status;
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  return wait_exit(pid);
}

std::string RunResult::describe() const {
  std::string s;
  if (exit_code >= 0) {
    s = "exited with status " + std::to_string(exit_code);
  } else if (term_signal != 0) {
    s = "killed by signal " + std::to_string(term_signal);
  } else {
    s = "did not finish";
  }
  if (timed_out) s += " (timed out after " + std::to_string(elapsed.count() / 1000) + " s)";
  return s;
}

Result<RunResult> run(SpawnOptions options, const RunLimits& limits, std::stop_token stop) {
  options.out = Stdio::pipe();
  options.err = Stdio::pipe();
  options.new_process_group = true;  // the timeout and stop reach the whole group
  auto child = spawn(options);
  if (!child) return child.error();
  RunResult r;
  r.pid = child->pid;
  Sink sinks[2] = {{child->out, &r.out, &r.out_truncated}, {child->err, &r.err, &r.err_truncated}};
  supervise(limits, r, sinks, stop);
  return r;
}

}  // namespace gp::util
