// The JFR adapter against real JVMs (tests/fixtures/runtime/java/Main.java): stacks with the
// known method chain, error frames for a JVM that exits mid-session and a dead pid, refusals
// that must not harm the target, early stop, and no recording left behind.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gp/runtime/adapters.h"
#include "runtime/java/attach_socket.h"
#include "runtime_java_fixture.h"

namespace gp::test::runtime_java {
namespace {

using gp::model::FrameKind;
using namespace std::chrono_literals;
namespace rt = gp::runtime;

class JfrAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef GP_JAVA_CLASSES
    GTEST_SKIP() << "javac was not found at configure time";
#endif
    char tmpl[] = "/tmp/gp-java-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    work_dir_ = tmpl;
  }
  void TearDown() override {
    if (!work_dir_.empty()) std::filesystem::remove_all(work_dir_);
  }
  rt::Profile profile(pid_t pid, std::chrono::milliseconds duration, std::stop_token stop = {}) {
    rt::Target t;
    t.pid = pid;
    t.runtime = rt::Runtime::java;
    rt::SessionParams params;
    params.frequency_hz = 50;
    params.duration = duration;
    params.mode = "jfr";
    params.work_dir = work_dir_;
    return rt::make_jfr_adapter()->profile(t, params, stop);
  }
  std::string work_dir_;
};

// The index where `chain` starts in `s` (root first, consecutive), or -1.
int find_chain(const rt::Stack& s, const std::vector<std::string>& chain) {
  for (size_t i = 0; i + chain.size() <= s.frames.size(); ++i) {
    bool all = true;
    for (size_t j = 0; j < chain.size() && all; ++j) all = s.frames[i + j].name == chain[j];
    if (all) return static_cast<int>(i);
  }
  return -1;
}

void expect_main_chain(const rt::Profile& p, pid_t pid) {
  std::string warnings;
  for (const auto& w : p.warnings) warnings += w + "\n";
  ASSERT_EQ(p.error_frame, "") << warnings;
  ASSERT_FALSE(p.stacks.empty()) << "no JFR samples of pid " << pid << "; warnings:\n" << warnings;
  uint64_t with_work = 0, with_spin = 0;
  for (const auto& s : p.stacks) {
    int at = find_chain(s, {"Main.main([Ljava/lang/String|)V", "Main.work()V"});
    if (at < 0) continue;
    with_work += s.count;
    EXPECT_EQ(s.frames[at].kind, FrameKind::java);
    EXPECT_EQ(s.frames[at + 1].kind, FrameKind::java);
    EXPECT_EQ(s.thread_name, "main");
    EXPECT_GT(s.tid, 0);
    EXPECT_NE(s.tid, pid);  // the main Java thread is not the launcher's thread
    if (s.frames.size() > static_cast<size_t>(at + 2) && s.frames[at + 2].name == "Main.spin(J)J") {
      with_spin += s.count;
    }
  }
  std::string seen;
  for (const auto& s : p.stacks) {
    seen += "\n" + std::to_string(s.count) + " [" + s.thread_name + "]";
    for (const auto& f : s.frames) seen += " " + f.name;
  }
  EXPECT_GT(with_work, 0u) << seen;
  EXPECT_GT(with_spin, 0u) << seen;
}

TEST_F(JfrAdapterTest, ShowsTheJavaMethodChainOfABusyJvm) {
  auto jvm = JavaProgram::start({}, {});
  ASSERT_TRUE(jvm);
  auto p = profile(jvm->pid(), 4s);
  expect_main_chain(p, jvm->pid());
  EXPECT_TRUE(jvm->alive());
  EXPECT_EQ(jfr_check(jvm->pid()).find("gp-runtime"), std::string::npos);
  // Nothing left in the JVM's /tmp or gp's work_dir.
  std::string mine = "gp-jfr-" + std::to_string(jvm->pid()) + "-";
  for (const auto& e : std::filesystem::directory_iterator("/tmp")) {
    EXPECT_NE(e.path().filename().string().rfind(mine, 0), 0u) << e.path();
  }
  EXPECT_TRUE(std::filesystem::is_empty(work_dir_));
}

TEST_F(JfrAdapterTest, JvmThatExitsMidSessionGivesTheErrorFrame) {
  auto jvm = JavaProgram::start({}, {"3"});
  ASSERT_TRUE(jvm);
  auto p = profile(jvm->pid(), 20s);
  EXPECT_EQ(p.error_frame, "[Profiling error: process went down during profiling]");
  EXPECT_TRUE(p.stacks.empty());
}

TEST_F(JfrAdapterTest, DeadPidGivesTheErrorFrame) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  ASSERT_GT(pid, 0);
  waitpid(pid, nullptr, 0);
  auto p = profile(pid, 2s);
  EXPECT_EQ(p.error_frame, "[Profiling error: process went down during profiling]");
}

TEST_F(JfrAdapterTest, RefusesANonJvmWithoutSignallingIt) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  usleep(200000);
  auto p = profile(pid, 2s);
  EXPECT_EQ(p.error_frame, "[Profiling skipped: not a HotSpot JVM (libjvm.so is not mapped)]");
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0);  // still running: no SIGQUIT was sent
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST_F(JfrAdapterTest, SkipsAJvmThatDisablesAttaching) {
  auto jvm = JavaProgram::start({"-XX:+DisableAttachMechanism"}, {});
  ASSERT_TRUE(jvm);
  auto p = profile(jvm->pid(), 2s);
  EXPECT_EQ(p.error_frame,
            "[Profiling skipped: the JVM disables attaching (-XX:+DisableAttachMechanism)]");
  EXPECT_TRUE(jvm->alive());
}

TEST_F(JfrAdapterTest, EarlyStopEndsTheRecordingAndKeepsWhatWasSampled) {
  auto jvm = JavaProgram::start({}, {});
  ASSERT_TRUE(jvm);
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(6s);
    stop.request_stop();
  });
  auto begin = std::chrono::steady_clock::now();
  auto p = profile(jvm->pid(), 600s, stop.get_token());
  // Far from the 600 s asked for: JFR.stop and jfr print take a few seconds on a busy host.
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 120s);
  EXPECT_EQ(p.error_frame, "");
  EXPECT_TRUE(jvm->alive());
  EXPECT_EQ(jfr_check(jvm->pid()).find("gp-runtime"), std::string::npos);
}

TEST_F(JfrAdapterTest, ProfilesAnotherUsersJvmAsThatUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start a JVM as another user";
  struct stat st {};
  ASSERT_EQ(stat(GP_JAVA_CLASSES "/Main.class", &st), 0);
  if ((st.st_mode & S_IROTH) == 0) GTEST_SKIP() << "the classes are not readable by nobody";
  auto jvm = JavaProgram::start({}, {}, 65534);
  if (!jvm) GTEST_SKIP() << "java does not start as nobody here";
  auto p = profile(jvm->pid(), 10s);
  expect_main_chain(p, jvm->pid());
}

// A pid no process has and no attach file names in /tmp (for a JVM started with that pid),
// half the pid space away from the last one given out, so no new process takes it first.
pid_t free_pid() {
  long max = 32768, last = 0;
  std::ifstream("/proc/sys/kernel/pid_max") >> max;
  std::ifstream("/proc/sys/kernel/ns_last_pid") >> last;
  for (long i = 0; i < max; i += 7) {
    auto p = static_cast<pid_t>((last + max / 2 + i) % max);
    if (p < 1000) continue;
    std::string n = std::to_string(p);
    struct stat st {};
    if (stat(("/proc/" + n).c_str(), &st) != 0 && lstat(("/tmp/.java_pid" + n).c_str(), &st) != 0)
      return p;
  }
  return 0;
}

// A socket file at `path` as a killed JVM leaves it, owned by `uid`, modified an hour ago.
bool plant_socket(const std::string& path, uid_t uid) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (fd >= 0) close(fd);
  timespec times[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
  return ok && chown(path.c_str(), uid, uid) == 0 &&
         utimensat(AT_FDCWD, path.c_str(), times, 0) == 0;
}

// Main.class can be run by nobody (the other user of these tests).
bool classes_readable_by_others() {
  struct stat st {};
  return stat(GP_JAVA_CLASSES "/Main.class", &st) == 0 && (st.st_mode & S_IROTH) != 0;
}

// The pid-reuse case of a long-lived host: /tmp/.java_pid<PID> is a socket that a killed root
// JVM left before a JVM of another user got its pid. That JVM cannot remove it at its start (the
// sticky /tmp), and jcmd, run as the JVM's user, refuses it (not owned by that user): gp removes
// it and the profile has the JVM's frames.
TEST_F(JfrAdapterTest, ProfilesAJvmWhosePidLeftAStaleAttachSocket) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to choose a pid";
  ASSERT_TRUE(classes_readable_by_others());
  pid_t want = free_pid();
  ASSERT_GT(want, 0);
  std::string path = "/tmp/.java_pid" + std::to_string(want);
  ASSERT_TRUE(plant_socket(path, 0)) << path;
  struct stat planted {};
  ASSERT_EQ(lstat(path.c_str(), &planted), 0);
  std::this_thread::sleep_for(1500ms);  // the JVM starts well after the socket's last change
  auto jvm = JavaProgram::start({}, {}, 65534, want);
  ASSERT_TRUE(jvm) << "java did not start with pid " << want;
  ASSERT_EQ(jvm->pid(), want);
  // The premise: the JVM left the socket, and jcmd as its user cannot attach past it.
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  ASSERT_EQ(st.st_ino, planted.st_ino);
  std::string refused = jfr_check(want, "setpriv --reuid=65534 --regid=65534 --clear-groups ");
  EXPECT_NE(refused.find("owned by 0"), std::string::npos) << refused;
  auto p = profile(want, 5s);
  expect_main_chain(p, want);
  if (lstat(path.c_str(), &st) == 0) {
    EXPECT_NE(st.st_ino, planted.st_ino) << "the stale socket is still there";
    EXPECT_EQ(st.st_uid, 65534u);  // the JVM's own socket
  }
}

// A socket the live JVM made, or one made after it started (whatever its mtime says), is never
// removed; nor is a link or a regular file at the attach path, however old.
TEST_F(JfrAdapterTest, LeavesAnAttachSocketMadeAfterTheJvmStartedAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to plant another user's file";
  namespace java = gp::runtime::java;
  auto jvm = JavaProgram::start({}, {});
  ASSERT_TRUE(jvm);
  std::string path = "/tmp/.java_pid" + std::to_string(jvm->pid());
  // The JVM's own socket, made when gp attached.
  expect_main_chain(profile(jvm->pid(), 2s), jvm->pid());
  struct stat own {};
  ASSERT_EQ(lstat(path.c_str(), &own), 0);
  auto info = java::inspect_jvm(jvm->pid());
  ASSERT_TRUE(info);
  EXPECT_EQ(java::remove_stale_attach_socket(*info), java::AttachSocket::current);
  struct stat after {};
  ASSERT_EQ(lstat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, own.st_ino);
  // Another user's socket put there now with an old mtime: its ctime is after the JVM's start.
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_TRUE(plant_socket(path, 65534));
  struct stat planted {};
  ASSERT_EQ(lstat(path.c_str(), &planted), 0);
  EXPECT_EQ(java::remove_stale_attach_socket(*info), java::AttachSocket::current);
  ASSERT_EQ(lstat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, planted.st_ino);
  unlink(path.c_str());
}

TEST_F(JfrAdapterTest, LeavesAnOldLinkOrFileAtTheAttachPathAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to choose a pid";
  ASSERT_TRUE(classes_readable_by_others());
  namespace java = gp::runtime::java;
  std::string victim = work_dir_ + "/victim";
  { std::ofstream(victim) << "keep"; }
  for (bool link : {true, false}) {
    pid_t want = free_pid();
    ASSERT_GT(want, 0);
    std::string path = "/tmp/.java_pid" + std::to_string(want);
    if (link) {
      ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
    } else {
      std::ofstream(path) << "not a socket";
    }
    std::this_thread::sleep_for(1500ms);
    {
      // As nobody: a root JVM would remove whatever is at its attach path when it starts.
      auto jvm = JavaProgram::start({}, {}, 65534, want);
      ASSERT_TRUE(jvm);
      auto info = java::inspect_jvm(want);
      ASSERT_TRUE(info);
      EXPECT_EQ(java::remove_stale_attach_socket(*info), java::AttachSocket::current);
    }
    struct stat st {};
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(access(victim.c_str(), F_OK), 0);
    unlink(path.c_str());
  }
}

}  // namespace
}  // namespace gp::test::runtime_java
