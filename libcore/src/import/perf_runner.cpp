#include "gp/import/perf_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace gp::import {
namespace {

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return {};
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

// posix_spawn plumbing: stdin from /dev/null, stdout to the pipe, stderr to the memfd, and
// SIGPIPE back to its default (gp tools ignore it) so perf dies quietly if we stop reading.
Result<pid_t> spawn(const std::string& exe, const std::vector<std::string>& args, int out_fd,
                    int err_fd, int pipe_read_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  posix_spawn_file_actions_addclose(&fa, pipe_read_fd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, exe.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return make_error("cannot run '" + exe + "': " + std::strerror(rc));
  return pid;
}

}  // namespace

std::vector<std::string> PerfScriptProcess::script_args(const std::string& data_path) {
  return {"script", "-i", data_path, "--header", "-F", "+pid"};
}

Result<std::unique_ptr<PerfScriptProcess>> PerfScriptProcess::start(
    const std::string& perf_exe, const std::vector<std::string>& args) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  int err_fd = memfd_create("gp-import-perf-stderr", MFD_CLOEXEC);
  if (err_fd < 0) {
    close(fds[0]);
    close(fds[1]);
    return make_error(std::string("memfd_create: ") + std::strerror(errno));
  }
  auto pid = spawn(perf_exe, args, fds[1], err_fd, fds[0]);
  close(fds[1]);
  if (!pid) {
    close(fds[0]);
    close(err_fd);
    return pid.error();
  }
  return std::unique_ptr<PerfScriptProcess>(
      new PerfScriptProcess(*pid, fds[0], err_fd, perf_exe));
}

PerfScriptProcess::~PerfScriptProcess() {
  if (out_fd_ >= 0) close(out_fd_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (err_fd_ >= 0) close(err_fd_);
}

void PerfScriptProcess::collect_stderr() {
  char buf[4096];
  off_t off = 0;
  ssize_t n;
  while ((n = pread(err_fd_, buf, sizeof buf, off)) > 0 && stderr_.size() < (1u << 20)) {
    stderr_.append(buf, static_cast<size_t>(n));
    off += n;
  }
}

Status PerfScriptProcess::wait() {
  if (out_fd_ >= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  collect_stderr();
  if (r < 0) return make_error(std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok_status();
  std::string why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                      : "killed by signal " + std::to_string(WTERMSIG(status));
  std::string line = last_line(stderr_);
  if (!line.empty()) why += ": " + line;
  return make_error("'" + exe_ + " script' failed (" + why + ")");
}

}  // namespace gp::import
