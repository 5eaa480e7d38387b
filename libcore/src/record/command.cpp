// RecordedCommand (gp/record/command.h): a held child in a cgroup v2 directory of its own.
#include "gp/record/command.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace gp::record {
namespace {

// The running command's pid for forward_to_command(); 0 when none.
volatile sig_atomic_t g_command = 0;

bool write_file(const std::string& path, const std::string& text, int* err) {
  std::ofstream f(path);
  f << text;
  f.flush();
  if (f) return true;
  *err = errno != 0 ? errno : EIO;
  return false;
}

std::string cgroup_error(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

}  // namespace

std::string own_cgroup_dir() {
  std::string mount;
  std::ifstream mi("/proc/self/mountinfo");
  for (std::string line; std::getline(mi, line);) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (root == "/") {
      mount = point;
      break;
    }
  }
  if (mount.empty()) return {};
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);)
    if (line.rfind("0::", 0) == 0) {
      std::string path = line.substr(3);
      return path == "/" ? mount : mount + path;
    }
  return {};
}

Result<RecordedCommand> RecordedCommand::start(const std::vector<std::string>& argv) {
  util::SpawnOptions options;
  options.argv = argv;
  options.in = util::Stdio::inherit();
  options.out = util::Stdio::inherit();
  options.err = util::Stdio::inherit();
  // gp-record's process group: the terminal's ^C and job control reach the command as they
  // would without gp-record, and a command reading the terminal is in its foreground group.
  options.new_process_group = false;
  options.hold = true;
  RecordedCommand command;
  const std::string parent = own_cgroup_dir();
  if (parent.empty()) {
    command.no_cgroup_ = "no cgroup v2 hierarchy is mounted";
  } else {
    const std::string dir = parent + "/gp-record." + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) command.cgroup_ = dir;
    else command.no_cgroup_ = cgroup_error("cannot create cgroup '" + dir + "'", errno);
  }
  auto child = util::spawn(options);
  if (!child) {
    command.remove_cgroup();
    return child.error();
  }
  command.child_ = std::move(*child);
  if (!command.cgroup_.empty()) {
    int err = 0;
    if (!write_file(command.cgroup_ + "/cgroup.procs", std::to_string(command.child_.pid), &err)) {
      command.no_cgroup_ = cgroup_error("cannot move the command into '" + command.cgroup_ + "'", err);
      command.remove_cgroup();
    }
  }
  g_command = command.child_.pid;
  return command;
}

RecordedCommand::RecordedCommand(RecordedCommand&& other) noexcept
    : child_(std::move(other.child_)),
      cgroup_(std::move(other.cgroup_)),
      no_cgroup_(std::move(other.no_cgroup_)),
      released_(other.released_),
      reaped_(other.reaped_),
      status_(other.status_) {
  other.child_ = util::Child{};
  other.cgroup_.clear();
  other.reaped_ = true;
}

RecordedCommand::~RecordedCommand() {
  if (child_.pid > 0 && !reaped_) {
    if (child_.release >= 0) ::close(child_.release);  // a held child exits
    if (child_.report >= 0) ::close(child_.report);
    if (released_) ::kill(child_.pid, SIGKILL);
    int status = 0;
    while (::waitpid(child_.pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_command = 0;
  }
  remove_cgroup();
}

Status RecordedCommand::release() {
  auto st = util::release(child_);
  if (!st) {
    reaped_ = true;  // release() reaped it
    g_command = 0;
    return st;
  }
  released_ = true;
  return ok_status();
}

bool RecordedCommand::exited() {
  if (reaped_) return true;
  int status = 0;
  pid_t r = ::waitpid(child_.pid, &status, WNOHANG);
  if (r == child_.pid) {
    status_ = util::ExitStatus::from_wait_status(status);
    reaped_ = true;
    g_command = 0;
  } else if (r < 0 && errno == ECHILD) {
    reaped_ = true;
    g_command = 0;
  }
  return reaped_;
}

void RecordedCommand::wait() {
  if (reaped_) return;
  status_ = util::wait_exit(child_.pid);
  reaped_ = true;
  g_command = 0;
}

int RecordedCommand::exit_code() const {
  return status_.signal != 0 ? 128 + status_.signal : status_.code;
}

// Processes the command left behind go back to gp-record's cgroup; then the directory goes.
// The kernel lets the last exited task go asynchronously: rmdir is tried for a while.
void RecordedCommand::remove_cgroup() {
  if (cgroup_.empty()) return;
  const std::string parent = cgroup_.substr(0, cgroup_.rfind('/'));
  for (int attempt = 0; attempt < 50; ++attempt) {
    {
      std::ifstream procs(cgroup_ + "/cgroup.procs");
      int err = 0;
      for (std::string pid; std::getline(procs, pid);)
        if (!pid.empty()) write_file(parent + "/cgroup.procs", pid, &err);
    }
    if (::rmdir(cgroup_.c_str()) == 0 || errno == ENOENT) break;
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  cgroup_.clear();
}

void forward_to_command(int sig, const siginfo_t* info) {
  const pid_t pid = g_command;
  if (pid <= 0) return;
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  ::kill(pid, sig);
}

}  // namespace gp::record
