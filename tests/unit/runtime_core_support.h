#pragma once
// Real target processes for gp-runtime's core tests. They are started detached (double fork,
// so they are not descendants of the test: discovery skips gp's own descendants) and killed
// when the object goes away.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace gp::test {

class DetachedProcess {
 public:
  explicit DetachedProcess(std::vector<std::string> argv, std::string cwd = "/") {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    pid_t child = ::fork();
    if (child == 0) {
      ::setsid();
      pid_t grandchild = ::fork();
      if (grandchild == 0) {
        int null_fd = ::open("/dev/null", O_RDWR);
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
        if (::chdir(cwd.c_str()) != 0) ::_exit(126);
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
      }
      (void)!::write(fds[1], &grandchild, sizeof grandchild);
      ::_exit(0);
    }
    ::close(fds[1]);
    if (::read(fds[0], &pid_, sizeof pid_) != sizeof pid_) pid_ = 0;
    ::close(fds[0]);
    ::waitpid(child, nullptr, 0);
  }
  DetachedProcess(const DetachedProcess&) = delete;
  DetachedProcess& operator=(const DetachedProcess&) = delete;
  ~DetachedProcess() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  pid_t pid() const { return pid_; }

  // Waits until /proc/PID/maps shows `needle` and libc: the runtime has loaded. The new program's
  // own mapping appears while execve is still building the process (its auxv may be empty then);
  // libc is mapped later, by the dynamic loader, once the exec is complete.
  bool wait_for_map(const std::string& needle,
                    std::chrono::seconds limit = std::chrono::seconds(60)) const {
    auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
      std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
      if (all.find(needle) != std::string::npos && all.find("/libc.so") != std::string::npos)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  pid_t pid_ = 0;
};

// Debian's interpreter, not a pyenv shim that may come first on PATH.
inline const char* system_python() { return "/usr/bin/python3"; }

}  // namespace gp::test
