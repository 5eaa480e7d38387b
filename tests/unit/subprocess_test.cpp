// gp's one spawner (gp/util/subprocess.h) with real children: exit statuses, captured streams,
// timeouts, start-up failures as errors, descriptors, environment and process groups.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gp/util/subprocess.h"

namespace gp::util {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

SpawnOptions cmd(std::vector<std::string> argv) {
  SpawnOptions o;
  o.argv = std::move(argv);
  return o;
}

RunResult run_ok(SpawnOptions o, RunLimits limits = {}) {
  auto r = run(std::move(o), limits);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r.value()) : RunResult{};
}

// Alive and not a zombie.
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  return text;
}

TEST(Subprocess, ExitStatusAndSignalAreReported) {
  auto child = spawn(cmd({"sh", "-c", "exit 3"}));
  ASSERT_TRUE(child.ok()) << child.error().message;
  ExitStatus s = wait_exit(child->pid);
  EXPECT_EQ(s.code, 3);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.describe(), "exit status 3");

  auto killed = spawn(cmd({"sh", "-c", "kill -9 $$"}));
  ASSERT_TRUE(killed.ok());
  ExitStatus k = wait_exit(killed->pid);
  EXPECT_EQ(k.signal, SIGKILL);
  EXPECT_EQ(k.describe(), "killed by signal 9 (Killed)");
  EXPECT_TRUE(wait_exit(spawn(cmd({"true"}))->pid).ok());
}

TEST(Subprocess, StdoutAndStderrAreCapturedApart) {
  auto r = run_ok(cmd({"sh", "-c", "echo out; echo 'last words' >&2; exit 1"}));
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "last words\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.describe(), "exited with status 1");
}

TEST(Subprocess, StderrIntoTheCallersDescriptorAndStdoutThroughAPipe) {
  int memfd = ::memfd_create("gp-subprocess-test", MFD_CLOEXEC);
  ASSERT_GE(memfd, 0);
  auto o = cmd({"sh", "-c", "echo streamed; echo complaint >&2"});
  o.out = Stdio::pipe();
  o.err = Stdio::from_fd(memfd);
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().message;
  EXPECT_EQ(child->err, -1);
  EXPECT_EQ(read_all(child->out), "streamed\n");
  ::close(child->out);
  EXPECT_TRUE(wait_exit(child->pid).ok());
  char buf[64] = {};
  EXPECT_EQ(::pread(memfd, buf, sizeof buf - 1, 0), 10);
  EXPECT_STREQ(buf, "complaint\n");
  ::close(memfd);
}

TEST(Subprocess, TimeoutKillsTheChildAndWhatItStarted) {
  RunLimits limits;
  limits.timeout = 300ms;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_ok(cmd({"sh", "-c", "sleep 60 & echo $!; wait"}), limits);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.success());
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(r.exit_code, -1);
  pid_t grandchild = std::atoi(r.out.c_str());
  ASSERT_GT(grandchild, 0);
  for (int i = 0; i < 100 && running(grandchild); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(running(grandchild)) << "the background sleep survived";
}

TEST(Subprocess, AMissingExecutableIsAClearErrorNotAnExitStatus) {
  auto bare = spawn(cmd({"gp-no-such-program-xyz", "--flag"}));
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().message, "cannot run 'gp-no-such-program-xyz': not found on PATH");
  auto path = spawn(cmd({"/nonexistent/gp-tool"}));
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.error().message, "cannot run '/nonexistent/gp-tool': No such file or directory");
  auto captured = run(cmd({"/nonexistent/gp-tool"}), {});
  ASSERT_FALSE(captured.ok());
  EXPECT_EQ(captured.error().message, path.error().message);
}

TEST(Subprocess, StartUpErrorsReachAParentStartedWithoutStdinAndStdout) {
  // A daemon started with 0 and 1 closed gets the report pipe there: the error still arrives.
  const pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::close(0);
    ::close(1);
    auto r = spawn(cmd({"/nonexistent/gp-tool"}));
    ::_exit(!r.ok() && r.error().message.find("No such file or directory") != std::string::npos
                ? 0
                : 1);
  }
  EXPECT_TRUE(wait_exit(helper).ok());
}

TEST(Subprocess, StartUpFailuresInTheChildAreErrors) {
  std::string tmpl = (fs::temp_directory_path() / "gp-subprocess.XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  fs::path dir = tmpl;
  fs::path text = dir / "not-a-program";
  std::ofstream(text) << "hello\n";
  auto not_exec = spawn(cmd({text.string()}));
  ASSERT_FALSE(not_exec.ok());
  EXPECT_EQ(not_exec.error().message, "cannot run '" + text.string() + "': Permission denied");

  auto o = cmd({"true"});
  o.out = Stdio::file((dir / "no/such/dir/out").string());
  auto out = spawn(o);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message, "cannot create '" + (dir / "no/such/dir/out").string() +
                                     "': No such file or directory");

  auto c = cmd({"pwd"});
  c.cwd = (dir / "gone").string();
  auto cwd = run(c, {});
  ASSERT_FALSE(cwd.ok());
  EXPECT_EQ(cwd.error().message,
            "cannot change directory to '" + c.cwd + "': No such file or directory");
  fs::remove_all(dir);
}

TEST(Subprocess, FilesForStdinAndStdout) {
  std::string tmpl = (fs::temp_directory_path() / "gp-subprocess.XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  fs::path dir = tmpl;
  std::ofstream(dir / "in") << "from a file\n";
  std::ofstream(dir / "out") << "old content that is longer\n";
  auto o = cmd({"cat"});
  o.in = Stdio::file((dir / "in").string());
  o.out = Stdio::file((dir / "out").string());
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().message;
  EXPECT_TRUE(wait_exit(child->pid).ok());
  std::ifstream in(dir / "out");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(all, "from a file\n");  // truncated, then written
  fs::remove_all(dir);
}

TEST(Subprocess, OnlyTheStandardDescriptorsReachTheChild) {
  int leaky = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: a careless caller's descriptor
  ASSERT_GE(leaky, 0);
  auto r = run_ok(cmd({"sh", "-c", "ls /proc/self/fd"}));
  ::close(leaky);
  EXPECT_EQ(r.out, "0\n1\n2\n3\n");  // 3: the directory ls opened
}

TEST(Subprocess, EnvironmentIsTheParentsOrExactlyTheOneGiven) {
  ::setenv("GP_SUBPROCESS_MARK", "inherited", 1);
  auto inherited = run_ok(cmd({"env"}));
  auto o = cmd({"/usr/bin/env"});
  o.env = std::vector<std::string>{"ONLY=this"};
  auto given = run_ok(o);
  ::unsetenv("GP_SUBPROCESS_MARK");
  EXPECT_NE(inherited.out.find("GP_SUBPROCESS_MARK=inherited\n"), std::string::npos);
  EXPECT_EQ(given.out, "ONLY=this\n");
}

TEST(Subprocess, OwnProcessGroupUnlessAskedToStayInOurs) {
  const std::string print_pgid = "set -- $(cat /proc/$$/stat); echo $5";
  auto o = cmd({"sh", "-c", print_pgid});
  o.out = Stdio::pipe();
  auto shared = o;
  shared.new_process_group = false;
  auto a = spawn(o);
  auto b = spawn(shared);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(std::atoi(read_all(a->out).c_str()), a->pid);
  EXPECT_EQ(std::atoi(read_all(b->out).c_str()), ::getpgrp());
  ::close(a->out);
  ::close(b->out);
  wait_exit(a->pid);
  wait_exit(b->pid);
}

TEST(Subprocess, KillGroupEndsAChildThatIgnoresSigterm) {
  auto child = spawn(cmd({"sh", "-c", "trap '' TERM; while :; do sleep 1; done"}));
  ASSERT_TRUE(child.ok());
  auto w = wait_until(child->pid, std::chrono::steady_clock::now() + 100ms, nullptr);
  EXPECT_EQ(w.end, WaitEnd::deadline);
  ExitStatus s = kill_group(child->pid, 300ms);
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_FALSE(running(child->pid));
}

}  // namespace
}  // namespace gp::util
