#pragma once
// Real Node processes for the Node adapter tests: tests/fixtures/runtime/node/chain.js
// (main -> work -> spin, busy) started with chosen node options, killed at scope exit.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace gp::test::runtime_node {

inline std::chrono::steady_clock::time_point deadline_in(int seconds) {
  return std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
}

inline bool have_node() { return std::system("node --version >/dev/null 2>&1") == 0; }

#define GP_REQUIRE_NODE() \
  if (!::gp::test::runtime_node::have_node()) GTEST_SKIP() << "node is not installed"

class NodeProcess {
 public:
  // node <options> chain.js <lifetime>; `node_options` goes to NODE_OPTIONS when not empty.
  static NodeProcess start(const std::vector<std::string>& options,
                           const std::string& node_options = {}, int lifetime_s = 90) {
    NodeProcess p;
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return p;
    // --inspect-port=0: SIGUSR1 opens the inspector on a free port, not 9229, so tests that
    // run in parallel (ctest -j) never compete for one port.
    // --no-turbo-inlining: under load TurboFan still inlines spin() into work() (seen in CI).
    std::vector<std::string> args = {"node", "--inspect-port=0", "--no-turbo-inlining"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/node/chain.js");
    args.push_back(std::to_string(lifetime_s));
    p.cmdline_ = args;
    p.pid_ = ::fork();
    if (p.pid_ == 0) {
      ::dup2(out[1], 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 2);  // "Debugger listening on ..." after SIGUSR1
      if (node_options.empty()) ::unsetenv("NODE_OPTIONS");
      else ::setenv("NODE_OPTIONS", node_options.c_str(), 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("node", argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    p.ready_ = wait_ready(out[0]);
    ::close(out[0]);
    return p;
  }

  NodeProcess() = default;
  NodeProcess(NodeProcess&& o) noexcept
      : pid_(o.pid_), ready_(o.ready_), cmdline_(std::move(o.cmdline_)) {
    o.pid_ = 0;
  }
  NodeProcess& operator=(NodeProcess&&) = delete;
  ~NodeProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::unlink(map_path().c_str());
  }

  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }
  const std::vector<std::string>& cmdline() const { return cmdline_; }
  std::string map_path() const { return "/tmp/perf-" + std::to_string(pid_) + ".map"; }

 private:
  // "ready <pid>" on stdout once the script runs (20 s: 8 builds share 2 cores).
  static bool wait_ready(int fd) {
    std::string got;
    const auto deadline = deadline_in(20);
    while (got.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got.rfind("ready ", 0) == 0;
  }

  pid_t pid_ = 0;
  bool ready_ = false;
  std::vector<std::string> cmdline_;
};

}  // namespace gp::test::runtime_node
