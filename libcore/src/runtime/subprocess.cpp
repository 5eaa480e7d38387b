// run_profiler: fork/exec with pipes, limits, a cleared environment, timeout and stop.
#include "gp/runtime/subprocess.h"
#include "gp/runtime/discovery.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gp::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool is_executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::vector<std::string> child_environment(const RunOptions& o) {
  std::vector<std::string> env;
  const char* path = std::getenv("PATH");
  env.push_back(std::string("PATH=") + (path != nullptr && *path != '\0' ? path : kDefaultPath));
  for (const char* name : {"HOME", "TMPDIR", "LANG"}) {
    if (const char* v = std::getenv(name)) env.push_back(std::string(name) + "=" + v);
  }
  // gp's own mark: another gp instance's discovery never takes this process (a jcmd is a JVM
  // too) for an application (discovery.h).
  env.push_back(std::string(kSpawnedEnv) + "=gp-runtime " + std::to_string(::getpid()));
  // An extra NAME=value replaces an inherited NAME: getenv() takes the first match, so a
  // duplicate would silently keep gp's own value (e.g. TMPDIR for dotnet-trace).
  for (const std::string& extra : o.extra_env) {
    std::string prefix = extra.substr(0, extra.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(prefix); });
    env.push_back(extra);
  }
  return env;
}

std::vector<char*> c_array(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: only async-signal-safe calls (the parent has threads).
[[noreturn]] void exec_child(const RunOptions& o, const char* program, char* const* argv,
                             char* const* envp, int out_fd, int err_fd, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent already died
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
    ::_exit(127);
  }
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  if (o.address_space_bytes != 0) {
    rlimit lim{o.address_space_bytes, o.address_space_bytes};
    ::setrlimit(RLIMIT_AS, &lim);
  }
  if (o.cpu_seconds != 0) {
    rlimit lim{o.cpu_seconds, o.cpu_seconds + 1};
    ::setrlimit(RLIMIT_CPU, &lim);
  }
  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(127);
  ::execve(program, argv, envp);
  ::_exit(127);
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
    ::close(s.fd);
    s.fd = -1;
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
void supervise(const RunOptions& o, RunResult& r, Sink (&sinks)[2], std::stop_token stop) {
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
  for (auto& s : sinks) {
    if (s.fd >= 0) ::close(s.fd);
  }
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

std::string find_program(std::string_view name) {
  if (name.empty()) return {};
  std::string n(name);
  if (n.find('/') != std::string::npos) return is_executable(n) ? n : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr && *path != '\0' ? path : kDefaultPath;
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    std::size_t end = dirs.find(':', pos);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(pos, end - pos);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + n;
      if (is_executable(candidate)) return candidate;
    }
    pos = end + 1;
  }
  return {};
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

Result<RunResult> run_profiler(const RunOptions& o, std::stop_token stop) {
  if (o.argv.empty()) return make_error("no command to run");
  std::string program = find_program(o.argv[0]);
  if (program.empty()) return make_error("cannot run '" + o.argv[0] + "': not found on PATH");
  std::vector<std::string> argv_s = o.argv;
  std::vector<std::string> env_s = child_environment(o);
  auto argv = c_array(argv_s);
  auto envp = c_array(env_s);
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return make_error(std::string("pipe: ") + std::strerror(e));
  }
  const pid_t parent = ::getpid();
  RunResult r;
  r.pid = ::fork();
  if (r.pid == 0) exec_child(o, program.c_str(), argv.data(), envp.data(), out_pipe[1], err_pipe[1], parent);
  int fork_errno = errno;
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (r.pid < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return make_error(std::string("fork: ") + std::strerror(fork_errno));
  }
  ::setpgid(r.pid, r.pid);  // also from the parent, so kill(-pid) works before the child runs
  Sink sinks[2] = {{out_pipe[0], &r.out, &r.out_truncated}, {err_pipe[0], &r.err, &r.err_truncated}};
  supervise(o, r, sinks, stop);
  return r;
}

}  // namespace gp::runtime
