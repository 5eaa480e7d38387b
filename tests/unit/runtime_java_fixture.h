#pragma once
// Real JVMs for the Java adapter tests: `java -cp <classes> Main [seconds]` (from
// tests/fixtures/runtime/java/Main.java, compiled by tests/unit/runtime_java.cmake), started
// and waited for until it prints "ready", optionally as another user; killed at scope exit.

#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gp::test::runtime_java {

class JavaProgram {
 public:
  // Empty unique_ptr when java could not start or never printed "ready" within a minute.
  // `with_pid` (root only) starts it with that pid, free until then, as a reused pid would be.
  static std::unique_ptr<JavaProgram> start(const std::vector<std::string>& jvm_args,
                                            const std::vector<std::string>& args,
                                            std::optional<uid_t> as_uid = std::nullopt,
                                            std::optional<pid_t> with_pid = std::nullopt) {
#ifdef GP_JAVA_CLASSES
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
    // DebugNonSafepoints: JFR attached at run time cannot walk code compiled without it
    // (its samples of a hot C2 loop are dropped); gp-runtime(1) tells users the same.
    std::vector<std::string> argv = {"/usr/bin/java", "-Xmx64m", "-XX:+UseSerialGC",
                                     "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"};
    argv.insert(argv.end(), jvm_args.begin(), jvm_args.end());
    argv.insert(argv.end(), {"-cp", GP_JAVA_CLASSES, "Main"});
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_t pid = with_pid ? clone_with_pid(*with_pid) : fork();
    if (pid == 0) {
      dup2(fds[1], 1);
      if (as_uid) {
        gid_t gid = static_cast<gid_t>(*as_uid);
        if (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid(*as_uid) != 0) _exit(126);
      }
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    close(fds[1]);
    auto p = std::unique_ptr<JavaProgram>(new JavaProgram(pid, fds[0]));
    if (pid < 0 || !p->wait_ready()) return nullptr;
    return p;
#else
    (void)jvm_args;
    (void)args;
    (void)as_uid;
    return nullptr;
#endif
  }

  ~JavaProgram() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
  }

  pid_t pid() const { return pid_; }

  // Waits for the JVM to exit by itself; false when it still runs after `limit`.
  bool wait_exit(std::chrono::seconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        reaped_ = true;
        return true;
      }
      usleep(50000);
    }
    return false;
  }

  bool alive() const { return kill(pid_, 0) == 0; }

  // fork() with the child's pid chosen (clone3's set_tid: Linux 5.5+, CAP_SYS_ADMIN).
  static pid_t clone_with_pid(pid_t want) {
    clone_args args{};
    args.exit_signal = SIGCHLD;
    auto tid = static_cast<uint64_t>(want);
    args.set_tid = reinterpret_cast<uintptr_t>(&tid);
    args.set_tid_size = 1;
    return static_cast<pid_t>(syscall(SYS_clone3, &args, sizeof args));
  }

 private:
  JavaProgram(pid_t pid, int out_fd) : pid_(pid), out_fd_(out_fd) {}

  bool wait_ready() {
    std::string text;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 200) > 0) {
        char buf[256];
        ssize_t n = read(out_fd_, buf, sizeof buf);
        if (n <= 0) return false;
        text.append(buf, static_cast<size_t>(n));
        if (text.find("ready\n") != std::string::npos) return true;
      }
    }
    return false;
  }

  pid_t pid_;
  int out_fd_;
  bool reaped_ = false;
};

// `jcmd PID JFR.check` as the JVM's owner would see it (for "no recording left behind"), or
// as `prefix` (e.g. "setpriv ... ") runs it.
inline std::string jfr_check(pid_t pid, const std::string& prefix = "") {
  std::string cmd = prefix + "jcmd " + std::to_string(pid) + " JFR.check 2>&1";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  return out;
}

}  // namespace gp::test::runtime_java
