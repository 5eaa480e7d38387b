// snapshot_process (libcore/src/proc/process.cpp) on real processes the test starts, and on a
// procfs-shaped tree for the container fields.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gp/proc/process.h"
#include "proc_test_support.h"

namespace gp::test::proc {
namespace {

using gp::proc::snapshot_process;
using gp::proc::SnapshotOptions;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

// A child that exec'd `argv` and blocks until killed; the constructor returns after the exec
// (the close-on-exec pipe reaches EOF), so /proc shows the new program.
class Child {
 public:
  Child(const std::string& path, std::vector<std::string> argv) {
    int ready[2];
    int hold[2];
    EXPECT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe(hold), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(hold[0], 0);  // stdin that never gets data: `read` blocks
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(path.c_str(), args.data());
      ::_exit(127);
    }
    ::close(ready[1]);
    ::close(hold[0]);
    hold_ = hold[1];
    char c;
    while (::read(ready[0], &c, 1) > 0) {
    }
    ::close(ready[0]);
  }
  ~Child() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(hold_);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int hold_ = -1;
};

std::string real_path(const char* p) {
  char buf[PATH_MAX];
  return ::realpath(p, buf) ? std::string(buf) : std::string();
}

TEST(SnapshotProcess, DescribesAChildProcess) {
  const int64_t before = now_ns();
  Child child("/bin/sh", {"gp-test-shell", "-c", "read x", "arg one", ""});
  const int64_t after = now_ns();
  auto p = snapshot_process(child.pid());
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->pid, child.pid());
  EXPECT_EQ(p->ns_pid, child.pid());
  EXPECT_EQ(p->ppid, ::getpid());
  EXPECT_EQ(p->uid, ::getuid());
  EXPECT_EQ(p->comm, "sh");  // the executable's name, not argv[0]
  EXPECT_EQ(p->exe, real_path("/bin/sh"));
  EXPECT_EQ(p->cmdline, (std::vector<std::string>{"gp-test-shell", "-c", "read x", "arg one", ""}));
  // starttime has clock-tick (10 ms) resolution.
  EXPECT_GE(p->start_time_ns, before - 20'000'000);
  EXPECT_LE(p->start_time_ns, after + 20'000'000);
  EXPECT_EQ(p->cgroup, [] {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("0::", 0) == 0) return line.substr(3);
    }
    return std::string();
  }());
  EXPECT_FALSE(p->exited);
}

TEST(SnapshotProcess, RedactsTheCommandLineWhenAsked) {
  Child child("/bin/sh", {"sh", "-c", "read x", "--password=hunter2", "--token", "abc",
                          "https://bob:pw@example.com/x"});
  SnapshotOptions options;
  options.redact_cmdline = true;
  auto p = snapshot_process(child.pid(), options);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->cmdline,
            (std::vector<std::string>{"sh", "-c", "read x", "--password=<redacted>", "--token",
                                      "<redacted>", "https://<redacted>@example.com/x"}));
}

TEST(SnapshotProcess, ReportsAProcessThatExited) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ASSERT_GT(pid, 0);
  // First as a zombie (exited, not yet reaped), then gone entirely.
  for (int i = 0; i < 500; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (text.find(") Z ") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto zombie = snapshot_process(pid);
  ASSERT_FALSE(zombie.ok());
  EXPECT_NE(zombie.error().message.find("exited"), std::string::npos) << zombie.error().message;
  ::waitpid(pid, nullptr, 0);
  auto gone = snapshot_process(pid);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().message, "process " + std::to_string(pid) + " exited");
}

TEST(SnapshotProcess, KeepsAProcessWhoseMainThreadExited) {
  // The leader calls pthread_exit: it is a zombie, but the process runs on in another thread.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    pthread_t t;
    ::pthread_create(
        &t, nullptr,
        [](void*) -> void* {
          ::pause();
          return nullptr;
        },
        nullptr);
    ::close(ready[0]);
    ::close(ready[1]);
    // The raw exit(2) ends only the calling thread, like pthread_exit but without unwinding
    // through gtest's frames (which would catch the forced unwind and abort).
    ::syscall(SYS_exit, 0);
  }
  ::close(ready[1]);
  char c;
  while (::read(ready[0], &c, 1) > 0) {
  }
  ::close(ready[0]);
  bool leader_is_zombie = false;
  for (int i = 0; i < 500 && !leader_is_zombie; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    leader_is_zombie = text.find(") Z ") != std::string::npos;
    if (!leader_is_zombie) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto p = snapshot_process(pid);
  auto maps = gp::proc::executable_mappings(pid);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(leader_is_zombie);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->ppid, ::getpid());
  EXPECT_FALSE(p->exe.empty());
  EXPECT_FALSE(p->cmdline.empty());
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  bool has_exe = false;
  for (const auto& m : *maps) has_exe = has_exe || (m.path == p->exe && !m.build_id.empty());
  EXPECT_TRUE(has_exe);
}

TEST(ListProcesses, ListsLiveProcessesButNotThreads) {
  Child child("/bin/sh", {"sh", "-c", "read x"});
  // A live second thread of this process: its tid is a valid /proc/TID but not listed.
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread worker([&] {
    tid = ::gettid();
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::yield();
  const std::vector<int32_t> pids = gp::proc::list_processes();
  EXPECT_TRUE(std::is_sorted(pids.begin(), pids.end()));
  auto has = [&](int32_t pid) { return std::binary_search(pids.begin(), pids.end(), pid); };
  EXPECT_TRUE(has(1));
  EXPECT_TRUE(has(::getpid()));
  EXPECT_TRUE(has(child.pid()));
  EXPECT_FALSE(has(tid));
  EXPECT_EQ(::access(("/proc/" + std::to_string(tid)).c_str(), F_OK), 0);
  done = true;
  worker.join();
  EXPECT_TRUE(gp::proc::list_processes("/nonexistent").empty());
}

// A procfs-shaped tree: stat with a hostile comm, v1 cgroups naming a docker container, NSpid
// of a namespaced process, and the docker state file that names the container.
class FakeProc : public TempTreeTest {};

TEST_F(FakeProc, ReadsNamespacedPidAndContainerOfV1Cgroups) {
  const std::string id = "3f4a5b6c7d8e9f00112233445566778899aabbccddeeff00112233445566778a";
  write("proc/4242/stat",
        "4242 (evil) S 1 (x) S 77 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 12345 1000 100 "
        "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
  write("proc/4242/cmdline", std::string("python3\0app.py\0", 15));
  write("proc/4242/status", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t17\t1\n");
  write("proc/4242/cgroup",
        "12:cpuset:/\n11:memory:/docker/" + id + "\n1:name=systemd:/docker/" + id + "\n");
  write("host/var/lib/docker/containers/" + id + "/config.v2.json",
        R"({"ID":")" + id + R"(","Name":"/web-frontend","State":{"Running":true}})");
  SnapshotOptions options;
  options.proc_root = root_ + "/proc";
  options.host_root = root_ + "/host";
  auto p = snapshot_process(4242, options);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->comm, "evil) S 1 (x");
  EXPECT_EQ(p->ppid, 77);
  EXPECT_EQ(p->ns_pid, 1);
  EXPECT_EQ(p->uid, 1000u);
  EXPECT_EQ(p->cmdline, (std::vector<std::string>{"python3", "app.py"}));
  EXPECT_EQ(p->cgroup, "/");  // the first line's path on a v1-only host
  EXPECT_EQ(p->container_id, id);
  EXPECT_EQ(p->container_name, "web-frontend");
  EXPECT_TRUE(p->exe.empty());
  options.resolve_container_names = false;
  EXPECT_EQ(snapshot_process(4242, options)->container_name, "");
}

TEST_F(FakeProc, MissingPidIsReportedAsExited) {
  SnapshotOptions options;
  options.proc_root = root_;
  auto p = snapshot_process(99, options);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "process 99 exited");
}

}  // namespace
}  // namespace gp::test::proc
