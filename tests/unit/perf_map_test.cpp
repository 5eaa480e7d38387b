// copy_perf_map: real files in /tmp, refused symlinks/owners/links/FIFOs, the size cap, bad
// lines, and a process with its own private /tmp (mount namespace), read after it exited.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gp/proc/perf_map.h"
#include "gp/record/perf_map_tails.h"

namespace gp::test::proc {
namespace {

using gp::proc::copy_perf_map;
using gp::proc::PerfMapStats;

class PerfMap : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
    ::unlink(path_.c_str());
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    ::unlink(other_.c_str());
  }
  void write(const std::string& text) { std::ofstream(path_, std::ios::binary) << text; }
  Result<model::JitMap> copy(size_t cap = gp::proc::kDefaultPerfMapMaxBytes,
                             PerfMapStats* stats = nullptr) {
    return copy_perf_map(::getpid(), ::getpid(), cap, stats);
  }
  std::string path_;
  std::string other_ = "/tmp/gp-perfmap-target-" + std::to_string(::getpid());
};

TEST_F(PerfMap, CopiesARealFile) {
  write("7f0000001000 40 LazyCompile:*fib /srv/app.js:3\n0x7f0000002000 0x10 Interpreter\n");
  PerfMapStats stats;
  auto m = copy(gp::proc::kDefaultPerfMapMaxBytes, &stats);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->pid, ::getpid());
  EXPECT_EQ(m->path, path_);
  ASSERT_EQ(m->entries.size(), 2u);
  EXPECT_EQ(m->entries[0].start, 0x7f0000001000u);
  EXPECT_EQ(m->entries[0].size, 0x40u);
  EXPECT_EQ(m->entries[0].name, "LazyCompile:*fib /srv/app.js:3");
  EXPECT_EQ(m->entries[1].start, 0x7f0000002000u);
  EXPECT_EQ(m->entries[1].name, "Interpreter");
  EXPECT_FALSE(stats.truncated);
  EXPECT_EQ(stats.bad_lines, 0u);
}

TEST_F(PerfMap, SkipsMalformedLines) {
  write(
      "zzzz 10 bad_start\n1000 10\n1000\n\n2000 20 good\r\n3000 -5 negative\n4000 10 also good\n");
  PerfMapStats stats;
  auto m = copy(1 << 20, &stats);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->entries.size(), 2u);
  EXPECT_EQ(m->entries[0].name, "good");
  EXPECT_EQ(m->entries[1].name, "also good");
  EXPECT_EQ(stats.bad_lines, 4u);
}

TEST_F(PerfMap, CutsAnOversizedFileAtTheCapOnALineBoundary) {
  std::string text;
  char line[32];
  for (int i = 0; i < 100; ++i) {
    std::snprintf(line, sizeof line, "%d 10 fn_%03d\n", 1000 + i, i);  // 15 bytes a line
    text += line;
  }
  write(text);
  PerfMapStats stats;
  auto m = copy(200, &stats);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(stats.truncated);
  EXPECT_LE(stats.bytes_read, 200u);
  EXPECT_EQ(stats.bad_lines, 0u);  // no half line parsed
  EXPECT_EQ(stats.bytes_read, 195u);
  ASSERT_EQ(m->entries.size(), 13u);
  EXPECT_EQ(m->entries.back().name, "fn_012");
}

TEST_F(PerfMap, TailReadsGetOnlyWhatWasAppendedInWholeLines) {
  write("1000 10 first\n2000 10 sec");  // the writer is in the middle of its second line
  PerfMapStats stats;
  auto m = copy_perf_map(::getpid(), ::getpid(), 1 << 20, &stats);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->entries.size(), 1u);
  EXPECT_EQ(stats.next_offset, 14u);
  std::ofstream(path_, std::ios::binary | std::ios::app) << "ond\n3000 10 third\n";
  m = copy_perf_map(::getpid(), ::getpid(), 1 << 20, &stats, "/proc", stats.next_offset);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->entries.size(), 2u);
  EXPECT_EQ(m->entries[0].name, "second");
  EXPECT_EQ(m->entries[1].name, "third");
  EXPECT_FALSE(stats.rewritten);
  m = copy_perf_map(::getpid(), ::getpid(), 1 << 20, &stats, "/proc", stats.next_offset);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->entries.empty());  // nothing new
}

TEST_F(PerfMap, ARewrittenShorterFileIsReadFromTheStart) {
  write("1000 10 old_one\n2000 10 old_two\n");
  PerfMapStats stats;
  ASSERT_TRUE(copy_perf_map(::getpid(), ::getpid(), 1 << 20, &stats).ok());
  write("5000 10 new\n");
  auto m = copy_perf_map(::getpid(), ::getpid(), 1 << 20, &stats, "/proc", stats.next_offset);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(stats.rewritten);
  ASSERT_EQ(m->entries.size(), 1u);
  EXPECT_EQ(m->entries[0].name, "new");
}

TEST_F(PerfMap, TailsOfOneProcessFollowItsMapAndStartOverForANewProcess) {
  gp::record::PerfMapTails tails;
  auto none = tails.copy_new(::getpid(), ::getpid(), 42);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());  // no map yet
  write("1000 10 a\n");
  auto first = tails.copy_new(::getpid(), ::getpid(), 42);
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->entries.size(), 1u);
  auto same = tails.copy_new(::getpid(), ::getpid(), 42);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->has_value());  // nothing appended
  std::ofstream(path_, std::ios::binary | std::ios::app) << "2000 10 b\n";
  auto more = tails.copy_new(::getpid(), ::getpid(), 42);
  ASSERT_TRUE(more.ok() && more->has_value());
  ASSERT_EQ((*more)->entries.size(), 1u);
  EXPECT_EQ((*more)->entries[0].name, "b");
  auto reused = tails.copy_new(::getpid(), ::getpid(), 43);  // another process with the pid
  ASSERT_TRUE(reused.ok() && reused->has_value());
  EXPECT_EQ((*reused)->entries.size(), 2u);
  tails.clear();  // a new session
  auto whole = tails.copy_new(::getpid(), ::getpid(), 43);
  ASSERT_TRUE(whole.ok() && whole->has_value());
  EXPECT_EQ((*whole)->entries.size(), 2u);
}

TEST_F(PerfMap, RefusesASymlinkPlantedInTmp) {
  std::ofstream(other_) << "1000 10 secret_from_elsewhere\n";
  ASSERT_EQ(::symlink(other_.c_str(), path_.c_str()), 0);
  auto m = copy();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "refused: is a symbolic link");
}

TEST_F(PerfMap, RefusesAFileOwnedBySomeoneElse) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file another owner";
  write("1000 10 f\n");
  ASSERT_EQ(::chown(path_.c_str(), 12345, 12345), 0);
  auto m = copy();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "refused: owned by uid 12345, not by the process's user");
}

// A child that waits for SIGKILL after running `prepare` (0 = go on); -1 when prepare failed.
template <typename F>
pid_t spawn_waiting(F prepare) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    if (prepare() != 0) ::_exit(1);
    (void)::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  const bool ok = ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  if (!ok) {
    ::waitpid(child, nullptr, 0);
    return -1;
  }
  return child;
}

// A process of an unprivileged user: a file of root's under its map's name is not its own.
TEST_F(PerfMap, RefusesARootFileForAProcessOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a process as another user";
  const pid_t child = spawn_waiting(
      [] { return ::setresgid(65534, 65534, 65534) || ::setresuid(65534, 65534, 65534); });
  ASSERT_GT(child, 0);
  const std::string map = "/tmp/perf-" + std::to_string(child) + ".map";
  std::ofstream(map) << "1000 10 root_only_secret\n";
  auto m = copy_perf_map(child, child);
  ::unlink(map.c_str());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_FALSE(m.ok()) << m->entries.at(0).name;
  EXPECT_EQ(m.error().message, "refused: owned by uid 0, not by the process's user");
}

// In its own mount namespace a process can bind-mount any file it can reach over its map's
// name: the file is then on another mount than /tmp, and refused.
TEST_F(PerfMap, RefusesAFileBindMountedOverTheMap) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private mount namespace";
  std::ofstream(other_) << "1000 10 secret_from_elsewhere\n";
  int go[2], ready[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {  // waits for its mount point, named by its pid, then mounts the secret on it
    char c = 0;
    const std::string map = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
    if (::read(go[0], &c, 1) != 1 || ::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(other_.c_str(), map.c_str(), nullptr, MS_BIND, nullptr) != 0)
      ::_exit(1);
    (void)::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  const std::string map = "/tmp/perf-" + std::to_string(child) + ".map";
  std::ofstream(map) << "";
  (void)::write(go[1], "g", 1);
  char c = 0;
  const bool mounted = ::read(ready[0], &c, 1) == 1;
  auto m = copy_perf_map(child, child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::unlink(map.c_str());
  for (int fd : {go[0], go[1], ready[0]}) ::close(fd);
  if (!mounted) GTEST_SKIP() << "cannot create a mount namespace here";
  ASSERT_FALSE(m.ok()) << m->entries.at(0).name;
  EXPECT_EQ(m.error().message, "refused: mounted over /tmp from elsewhere");
}

TEST_F(PerfMap, RefusesHardLinksAndFifos) {
  std::ofstream(other_) << "1000 10 f\n";
  ASSERT_EQ(::link(other_.c_str(), path_.c_str()), 0);
  auto linked = copy();
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.error().message, "refused: file has 2 hard links");
  ::unlink(path_.c_str());
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto fifo = copy();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));  // did not block
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().message, "refused: not a regular file");
}

TEST_F(PerfMap, SaysWhenThereIsNoFile) {
  auto m = copy();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "not found");
}

TEST(PerfMapJit, MarksAnonymousMappingsThatHoldMappedCode) {
  using model::MappingKind;
  std::vector<model::Mapping> maps = {
      {7, 0x1000, 0x2000, 0, "", "", 0, 0, MappingKind::anonymous},  // holds fib
      {7, 0x3000, 0x4000, 0, "", "", 0, 0, MappingKind::anonymous},  // nothing mapped there
      {7, 0x5000, 0x6000, 0, "/usr/bin/node", "id", 8, 9, MappingKind::user},  // a file: untouched
      {8, 0x1000, 0x2000, 0, "", "", 0, 0, MappingKind::anonymous},            // another process
  };
  model::JitMap jit;
  jit.pid = 7;
  gp::proc::parse_perf_map("5100 10 in_file\n1800 40 fib\n2000 10 just_past_the_end\n", jit);
  EXPECT_EQ(gp::proc::mark_jit_mappings(maps, jit), 1u);
  EXPECT_EQ(maps[0].kind, MappingKind::jit_map);
  EXPECT_EQ(maps[1].kind, MappingKind::anonymous);
  EXPECT_EQ(maps[2].kind, MappingKind::user);
  EXPECT_EQ(maps[3].kind, MappingKind::anonymous);
}

// A child with its own mount namespace and a private tmpfs /tmp holding its perf map, waiting
// to be killed; -1 (after a skip message) when this machine cannot make one.
pid_t spawn_in_private_tmp(const std::string& map_text, std::string* why) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m") != 0) {
      ::_exit(1);
    }
    std::ofstream("/tmp/perf-" + std::to_string(::getpid()) + ".map") << map_text;
    (void)::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  const bool ok = ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  if (!ok) {
    ::waitpid(child, nullptr, 0);
    *why = "cannot create a mount namespace with a private /tmp here";
    return -1;
  }
  return child;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// The map is looked up inside the process's mount namespace, not in the recorder's /tmp.
TEST(PerfMapNamespace, ReadsTheProcessesOwnTmp) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private mount namespace";
  std::string why;
  const pid_t child = spawn_in_private_tmp("abc0 20 only_in_the_namespace\n", &why);
  if (child < 0) GTEST_SKIP() << why;
  const std::string host_path = "/tmp/perf-" + std::to_string(child) + ".map";
  const bool visible_here = ::access(host_path.c_str(), F_OK) == 0;
  auto m = copy_perf_map(child, child, 1 << 20);
  kill_and_reap(child);
  EXPECT_FALSE(visible_here);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->entries.size(), 1u);
  EXPECT_EQ(m->entries[0].name, "only_in_the_namespace");
  EXPECT_EQ(m->entries[0].start, 0xabc0u);
}

// Once the process is gone, so is its /proc/PID/root and (its namespace's last process) its
// tmpfs: only the /tmp pinned while it lived still reaches the map.
TEST(PerfMapNamespace, APinnedProcessIsReadAfterItExits) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private mount namespace";
  std::string why;
  const pid_t child = spawn_in_private_tmp("abc0 20 jitted_before_exit\n", &why);
  if (child < 0) GTEST_SKIP() << why;
  gp::record::PerfMapTails pinned, unpinned;
  ASSERT_TRUE(pinned.pin(child));
  kill_and_reap(child);
  auto lost = unpinned.copy_new(child, child, 1);
  ASSERT_TRUE(lost.ok()) << lost.error().message;
  EXPECT_FALSE(lost->has_value());  // exited: out of reach
  auto kept = pinned.copy_new(child, child, 1);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  ASSERT_TRUE(kept->has_value());
  ASSERT_EQ((*kept)->entries.size(), 1u);
  EXPECT_EQ((*kept)->entries[0].name, "jitted_before_exit");
  pinned.forget(child);
  EXPECT_EQ(pinned.open_tmp_dirs(), 0u);
}

// A container runtime's process enters its namespace before its /tmp is mounted, and execs the
// program later: the pin taken after the mount (the exec's snapshot) holds the new /tmp, not
// the directory the first pin shares with the host.
TEST(PerfMapNamespace, APinAfterTmpIsMountedHoldsTheMountedTmp) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private mount namespace";
  int up[2], down[2];
  ASSERT_EQ(::pipe(up), 0);
  ASSERT_EQ(::pipe(down), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    char go = 0;
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      ::_exit(1);
    (void)::write(up[1], "1", 1);  // in its namespace, host /tmp still in view
    if (::read(down[0], &go, 1) != 1 || ::mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m") != 0)
      ::_exit(1);
    std::ofstream("/tmp/perf-" + std::to_string(::getpid()) + ".map")
        << "abc0 20 after_the_mount\n";
    (void)::write(up[1], "2", 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  if (::read(up[0], &c, 1) != 1) {
    ::waitpid(child, nullptr, 0);
    GTEST_SKIP() << "cannot create a mount namespace here";
  }
  gp::record::PerfMapTails tails;
  ASSERT_TRUE(tails.pin(::getpid()));  // the host's /tmp, pinned first
  EXPECT_TRUE(tails.pin(child));
  EXPECT_EQ(tails.open_tmp_dirs(), 1u);  // the same directory
  (void)::write(down[1], "g", 1);
  const bool mounted = ::read(up[0], &c, 1) == 1;
  if (mounted) {
    EXPECT_TRUE(tails.pin(child));  // the exec's snapshot
  }
  kill_and_reap(child);
  for (int fd : {up[0], up[1], down[0], down[1]}) ::close(fd);
  if (!mounted) GTEST_SKIP() << "cannot mount a tmpfs here";
  EXPECT_EQ(tails.open_tmp_dirs(), 2u);
  auto map = tails.copy_new(child, child, 1);
  ASSERT_TRUE(map.ok()) << map.error().message;
  ASSERT_TRUE(map->has_value());
  ASSERT_EQ((*map)->entries.size(), 1u);
  EXPECT_EQ((*map)->entries[0].name, "after_the_mount");
}

size_t open_fds() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    n += entry.is_symlink() ? 1 : 0;
  return n;
}

// One descriptor per /tmp, not per process: a host with thousands of processes holds a few.
TEST(PerfMapNamespace, ProcessesSharingATmpShareOnePin) {
  std::vector<pid_t> children;
  for (int i = 0; i < 3; ++i) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::pause();
      ::_exit(0);
    }
    children.push_back(child);
  }
  gp::record::PerfMapTails tails;
  const size_t before = open_fds();
  ASSERT_TRUE(tails.pin(::getpid()));
  for (pid_t c : children) EXPECT_TRUE(tails.pin(c));
  EXPECT_EQ(tails.open_tmp_dirs(), 1u);
  EXPECT_EQ(open_fds(), before + 1);
  for (pid_t c : children) {
    kill_and_reap(c);
    tails.forget(c);
  }
  EXPECT_EQ(tails.open_tmp_dirs(), 1u);  // still ours
  tails.forget(::getpid());
  EXPECT_EQ(tails.open_tmp_dirs(), 0u);
  EXPECT_EQ(open_fds(), before);
  EXPECT_FALSE(tails.pin(children[0]));  // gone: nothing to hold
}

}  // namespace
}  // namespace gp::test::proc
