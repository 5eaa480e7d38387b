// gp-profile's single-instance lock, pid file and continuous schedule (gprofiler.md §9.4, §1).
#include "gp/profile/instance.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <fstream>

#include "gp/util/safe_open.h"

namespace gp::profile {

Result<InstanceLock> InstanceLock::acquire(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket: ") + ::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::min(name.size(), sizeof(addr.sun_path) - 1);
  ::memcpy(addr.sun_path + 1, name.data(), len);  // sun_path[0] == 0: abstract namespace
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0) {
    int e = errno;
    ::close(fd);
    if (e == EADDRINUSE) return make_error("already held by another process");
    return make_error(std::string("bind: ") + ::strerror(e));
  }
  return InstanceLock(fd);
}

InstanceLock::InstanceLock(InstanceLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

InstanceLock::~InstanceLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<PidFile> PidFile::create(const std::string& path) {
  pid_t pid = ::getpid();
  std::string tmp = path + ".tmp";
  {
    // Not through a link another user planted in /tmp (gp/util/safe_open.h).
    auto fd = util::open_for_writing(tmp, O_WRONLY | O_CREAT | O_TRUNC);
    if (!fd) return fd.error();
    const std::string text = std::to_string(pid) + "\n";
    const bool written =
        ::write(*fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int e = errno;
    if (::close(*fd) != 0 || !written)
      return make_error("cannot write '" + tmp + "': " + ::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return make_error("cannot write '" + path + "': " + ::strerror(e));
  }
  return PidFile(path, pid);
}

PidFile::PidFile(PidFile&& other) noexcept : path_(std::move(other.path_)), pid_(other.pid_) {
  other.path_.clear();
}

PidFile::~PidFile() {
  if (path_.empty()) return;
  std::ifstream in(path_);
  pid_t recorded = 0;
  // Another instance may have replaced the file since; only our own is removed.
  if (in >> recorded && recorded == pid_) ::unlink(path_.c_str());
}

std::chrono::steady_clock::time_point next_session_start(
    std::chrono::steady_clock::time_point previous_start, std::chrono::seconds duration,
    std::chrono::steady_clock::time_point now) {
  return std::max(previous_start + duration, now);
}

bool any_alive(const std::vector<int>& pids) {
  return std::any_of(pids.begin(), pids.end(),
                     [](int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); });
}

}  // namespace gp::profile
