// TargetWatch: the -p/-t targets of a recording, and whether one still runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gp/record/target_watch.h"

namespace gp::test::record {
namespace {

namespace fs = std::filesystem;
using gp::record::TargetWatch;

// A /proc stand-in: <root>/<pid>/stat with the given state and starttime (field 22).
class FakeProc {
 public:
  FakeProc() : root_(fs::temp_directory_path() / ("gp-target-watch-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeProc() { fs::remove_all(root_); }
  void process(int pid, unsigned long long start_ticks, char state = 'R') {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "stat")
        << pid << " (work) " << state << " 1 1 1 0 -1 4194304 0 0 0 0 5 6 0 0 20 0 1 0 "
        << start_ticks << " 1000 100\n";
  }
  void gone(int pid) { fs::remove_all(root_ / std::to_string(pid)); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(TargetWatch, AliveWhileOneTargetRunsAndNotOnceAllHaveExited) {
  FakeProc proc;
  proc.process(100, 5000);
  proc.process(200, 6000);
  TargetWatch watch({100, 200}, proc.root());
  EXPECT_TRUE(watch.any_alive());
  proc.gone(100);
  EXPECT_TRUE(watch.any_alive());  // 200 still runs
  proc.gone(200);
  EXPECT_FALSE(watch.any_alive());
}

TEST(TargetWatch, AProcessThatTookATargetsPidIsNotTheTarget) {
  FakeProc proc;
  proc.process(100, 5000);
  TargetWatch watch({100}, proc.root());
  proc.process(100, 9000);  // the target exited; a new process got pid 100
  EXPECT_FALSE(watch.any_alive());
}

TEST(TargetWatch, AZombieHasExited) {
  FakeProc proc;
  proc.process(100, 5000);
  TargetWatch watch({100}, proc.root());
  proc.process(100, 5000, 'Z');
  EXPECT_FALSE(watch.any_alive());
}

TEST(TargetWatch, ARealChildProcessIsSeenToExit) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  TargetWatch watch({child});
  EXPECT_TRUE(watch.any_alive());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(watch.any_alive());
}

}  // namespace
}  // namespace gp::test::record
