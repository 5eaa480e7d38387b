// gp-profile's child processes and process-level pieces: tool lookup, spawn errors, waits
// with deadline and stop flag, group kills (grandchildren included), the lock, the pid file
// and the continuous schedule.

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "gp/profile/child.h"
#include "gp/profile/instance.h"

namespace gp::test::profile_child {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Gone, or a zombie nobody has reaped yet (whether init reaps promptly is not ours to test).
bool is_dead(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

class ProfileChild : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gp-profile-child.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path script(const std::string& name, const std::string& body) {
    fs::path p = root_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }
  fs::path root_;
};

TEST_F(ProfileChild, ToolsNextToTheExecutableWinOverPath) {
  fs::create_directories(root_ / "bin");
  fs::create_directories(root_ / "path");
  script("bin/gp-x", "true");
  script("path/gp-x", "true");
  script("path/gp-y", "true");
  std::string self = (root_ / "bin" / "gp-profile").string();
  std::string path = "/nonexistent:" + (root_ / "path").string();
  EXPECT_EQ(gp::profile::find_tool("gp-x", self, path), (root_ / "bin" / "gp-x").string());
  EXPECT_EQ(gp::profile::find_tool("gp-y", self, path), (root_ / "path" / "gp-y").string());
  EXPECT_EQ(gp::profile::find_tool("gp-z", self, path), std::nullopt);
}

TEST_F(ProfileChild, ExitStatusAndStderrAreReported) {
  auto prog = script("fail", "echo first >&2; echo 'last words' >&2; exit 4");
  std::string err = (root_ / "err").string();
  auto pid = gp::profile::spawn({prog.string(), {}, "/dev/null", err});
  ASSERT_TRUE(pid) << pid.error().message;
  auto w = gp::profile::wait_child(*pid, Clock::now() + 60s, nullptr);
  EXPECT_EQ(w.end, gp::profile::WaitEnd::exited);
  EXPECT_EQ(w.status.code, 4);
  EXPECT_EQ(w.status.describe(), "exit status 4");
  EXPECT_EQ(gp::profile::tail_lines(err, 1), std::vector<std::string>{"last words"});
}

TEST_F(ProfileChild, ArgumentsArriveVerbatim) {
  auto prog = script("echo", "printf '%s|' \"$@\"");
  std::string out = (root_ / "out").string();
  auto pid = gp::profile::spawn({prog.string(), {"a b", "--token", "$x"}, out, "/dev/null"});
  ASSERT_TRUE(pid);
  ASSERT_TRUE(gp::profile::wait_child(*pid, Clock::now() + 60s, nullptr).status.ok());
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "a b|--token|$x|");
}

TEST_F(ProfileChild, AMissingProgramIsAnErrorNotAnExitStatus) {
  auto pid = gp::profile::spawn({(root_ / "missing").string(), {}, "/dev/null", "/dev/null"});
  ASSERT_FALSE(pid);
  EXPECT_NE(pid.error().message.find("cannot run"), std::string::npos) << pid.error().message;
  auto bad_out =
      gp::profile::spawn({"/bin/true", {}, (root_ / "no/dir/out").string(), "/dev/null"});
  ASSERT_FALSE(bad_out);
  EXPECT_NE(bad_out.error().message.find("no/dir/out"), std::string::npos);
}

TEST_F(ProfileChild, DeadlineAndStopLeaveTheChildToTheCaller) {
  auto pid = gp::profile::spawn({"/bin/sleep", {"30"}, "/dev/null", "/dev/null"});
  ASSERT_TRUE(pid);
  auto w = gp::profile::wait_child(*pid, Clock::now() + 100ms, nullptr);
  EXPECT_EQ(w.end, gp::profile::WaitEnd::deadline);
  std::atomic<bool> stop{true};
  EXPECT_EQ(gp::profile::wait_child(*pid, Clock::now() + 60s, &stop).end,
            gp::profile::WaitEnd::stopped);
  auto killed = gp::profile::kill_child(*pid, 5000ms);
  EXPECT_EQ(killed.signal, SIGTERM);
}

TEST_F(ProfileChild, KillReachesGrandchildrenAndEscalatesToSigkill) {
  // The child ignores SIGTERM and leaves a grandchild that records its pid.
  std::string pidfile = (root_ / "grandchild").string();
  auto prog = script("stubborn", "trap '' TERM; sleep 300 & echo $! > " + pidfile + "; wait");
  auto pid = gp::profile::spawn({prog.string(), {}, "/dev/null", "/dev/null"});
  ASSERT_TRUE(pid);
  for (int i = 0; i < 500 && !fs::exists(pidfile); ++i) std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(50ms);
  int grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  ASSERT_GT(grandchild, 0);
  auto killed = gp::profile::kill_child(*pid, 300ms);
  EXPECT_EQ(killed.signal, SIGKILL);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = is_dead(grandchild);
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived";
}

TEST(ProfileInstance, TheLockIsExclusiveUntilReleased) {
  std::string name = "gp_profile_test_lock_" + std::to_string(::getpid());
  {
    auto first = gp::profile::InstanceLock::acquire(name);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_FALSE(gp::profile::InstanceLock::acquire(name));
  }
  EXPECT_TRUE(gp::profile::InstanceLock::acquire(name));
}

TEST_F(ProfileChild, PidFileHoldsOurPidAndIsRemovedOnlyIfStillOurs) {
  std::string path = (root_ / "gp.pid").string();
  {
    auto pf = gp::profile::PidFile::create(path);
    ASSERT_TRUE(pf) << pf.error().message;
    int recorded = 0;
    std::ifstream(path) >> recorded;
    EXPECT_EQ(recorded, ::getpid());
  }
  EXPECT_FALSE(fs::exists(path));
  {
    auto pf = gp::profile::PidFile::create(path);
    ASSERT_TRUE(pf);
    std::ofstream(path) << "1\n";  // another instance took over the file
  }
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(gp::profile::PidFile::create((root_ / "no/dir/gp.pid").string()));
}

TEST(ProfileSchedule, NextSessionStartsOneDurationAfterThePreviousOrAtOnce) {
  Clock::time_point t0{std::chrono::seconds(1000)};
  EXPECT_EQ(gp::profile::next_session_start(t0, 60s, t0 + 20s), t0 + 60s);
  EXPECT_EQ(gp::profile::next_session_start(t0, 60s, t0 + 75s), t0 + 75s);
}

TEST(ProfileInstance, AnyAliveSeesOurselvesButNotAnExitedChild) {
  EXPECT_TRUE(gp::profile::any_alive({::getpid()}));
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(gp::profile::any_alive({child}));
}

}  // namespace
}  // namespace gp::test::profile_child
