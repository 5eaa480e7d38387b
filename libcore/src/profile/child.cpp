// gp-profile's child processes: fork/exec in a new process group, deadline/stop-aware waits,
// group kills.
#include "gp/profile/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace gp::profile {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

ExitInfo decode(int status) {
  ExitInfo e;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

// In the forked child: only async-signal-safe calls until exec. Failures are written to
// `report` (close-on-exec, so a successful exec closes it with nothing written).
[[noreturn]] void exec_child(const ChildSpec& spec, char* const* argv, int report) {
  auto fail = [report](int stage) {
    int msg[2] = {stage, errno};
    (void)!::write(report, msg, sizeof msg);
    ::_exit(127);
  };
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // init_tool() ignores SIGPIPE and ignored signals survive exec; the child decides itself.
  ::signal(SIGPIPE, SIG_DFL);
  int in = ::open("/dev/null", O_RDONLY);
  int out = ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) fail(1);
  int err = ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err < 0) fail(2);
  if (in < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) fail(3);
  ::execv(spec.program.c_str(), argv);
  fail(0);
  ::_exit(127);  // not reached: fail() exits
}

}  // namespace

std::optional<std::string> find_tool(const std::string& name, const std::string& self_exe,
                                     const std::string& path) {
  if (auto slash = self_exe.rfind('/'); slash != std::string::npos) {
    std::string sibling = self_exe.substr(0, slash + 1) + name;
    if (is_executable_file(sibling)) return sibling;
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

Result<pid_t> spawn(const ChildSpec& spec) {
  std::vector<std::string> words{spec.program};
  words.insert(words.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + ::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    return make_error(std::string("fork: ") + ::strerror(e));
  }
  if (pid == 0) exec_child(spec, argv.data(), report[1]);
  ::close(report[1]);
  int msg[2];
  ssize_t n;
  do n = ::read(report[0], msg, sizeof msg);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n != static_cast<ssize_t>(sizeof msg)) return pid;  // exec succeeded
  ::waitpid(pid, nullptr, 0);
  static const char* const kStage[] = {"cannot run", "cannot create", "cannot create",
                                       "cannot redirect output of"};
  std::string object = msg[0] == 1   ? spec.stdout_path
                       : msg[0] == 2 ? spec.stderr_path
                                     : spec.program;
  return make_error(std::string(kStage[msg[0] & 3]) + " '" + object + "': " + ::strerror(msg[1]));
}

std::string ExitInfo::describe() const {
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exit status " + std::to_string(code);
}

WaitResult wait_child(pid_t pid, std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>* stop, const std::function<void()>& tick) {
  using namespace std::chrono;
  auto next_tick = steady_clock::now() + seconds(1);
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return {WaitEnd::exited, decode(status)};
    if (r < 0 && errno != EINTR) return {WaitEnd::exited, ExitInfo{}};  // not our child
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

ExitInfo kill_child(pid_t pid, std::chrono::milliseconds grace) {
  ::kill(-pid, SIGTERM);
  ::kill(pid, SIGTERM);  // in case it left its group
  auto result = wait_child(pid, std::chrono::steady_clock::now() + grace, nullptr);
  if (result.end == WaitEnd::exited) {
    ::kill(-pid, SIGKILL);  // grandchildren that outlived the tool
    return result.status;
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return decode(status);
}

std::vector<std::string> tail_lines(const std::string& path, size_t max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(line);
    if (lines.size() > max_lines) lines.erase(lines.begin());
  }
  return lines;
}

}  // namespace gp::profile
