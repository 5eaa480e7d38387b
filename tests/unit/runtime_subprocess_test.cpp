// run_profiler: real children (sh, sleep, head) under timeout, stop, output bounds and limits.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "gp/runtime/subprocess.h"

namespace gp::runtime {
namespace {

using namespace std::chrono_literals;

RunOptions cmd(std::vector<std::string> argv) {
  RunOptions o;
  o.argv = std::move(argv);
  return o;
}

RunResult run_ok(RunOptions o, std::stop_token stop = {}) {
  auto r = run_profiler(o, stop);
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

TEST(RuntimeSubprocess, CapturesStdoutStderrAndExitCode) {
  auto r = run_ok(cmd({"sh", "-c", "echo out; echo err >&2; exit 3"}));
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.success());
  EXPECT_EQ(r.describe(), "exited with status 3");
}

TEST(RuntimeSubprocess, UnknownProgramIsAnError) {
  auto r = run_profiler(cmd({"gp-no-such-profiler-xyz"}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("gp-no-such-profiler-xyz"), std::string::npos);
  EXPECT_EQ(find_program("gp-no-such-profiler-xyz"), "");
  EXPECT_EQ(find_program("sh").front(), '/');
}

TEST(RuntimeSubprocess, TimeoutKillsTheWholeGroup) {
  auto t0 = std::chrono::steady_clock::now();
  auto o = cmd({"sh", "-c", "sleep 60 & echo $!; wait"});
  o.timeout = 500ms;
  auto r = run_ok(o);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
  pid_t grandchild = std::atoi(r.out.c_str());
  ASSERT_GT(grandchild, 0);
  for (int i = 0; i < 100 && running(grandchild); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(running(grandchild)) << "the background sleep survived";
}

TEST(RuntimeSubprocess, OutputIsBoundedButTheChildIsNotBlocked) {
  auto o = cmd({"head", "-c", "5000000", "/dev/zero"});
  o.max_output_bytes = 1000;
  auto r = run_ok(o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
  EXPECT_FALSE(r.err_truncated);
}

TEST(RuntimeSubprocess, StopSendsTheStopSignalAndReturnsOutput) {
  std::stop_source source;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(300ms);
    source.request_stop();
  });
  // The child prints on SIGINT, as py-spy writes its profile when interrupted.
  auto r = run_ok(cmd({"sh", "-c", "trap 'echo interrupted; exit 0' INT; sleep 60 & wait"}),
                  source.get_token());
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "interrupted\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(RuntimeSubprocess, StopEscalatesToSigkillAfterGrace) {
  std::stop_source source;
  source.request_stop();
  auto t0 = std::chrono::steady_clock::now();
  auto o = cmd({"sh", "-c", "trap '' INT; while :; do sleep 1; done"});
  o.stop_grace = 300ms;
  auto r = run_ok(o, source.get_token());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.term_signal, SIGKILL);
}

TEST(RuntimeSubprocess, EnvironmentIsClearedExceptTheBasics) {
  ::setenv("GP_SUBPROCESS_SECRET", "leak", 1);
  auto o = cmd({"env"});
  o.extra_env = {"GP_EXTRA=1"};
  auto r = run_ok(o);
  ::unsetenv("GP_SUBPROCESS_SECRET");
  EXPECT_EQ(r.out.find("GP_SUBPROCESS_SECRET"), std::string::npos);
  EXPECT_NE(r.out.find("PATH="), std::string::npos);
  EXPECT_NE(r.out.find("GP_EXTRA=1\n"), std::string::npos);
  // gp's mark, so that no other gp instance profiles what this one started.
  EXPECT_NE(r.out.find("GP_SPAWNED_BY=gp-runtime " + std::to_string(::getpid()) + "\n"),
            std::string::npos)
      << r.out;
}

TEST(RuntimeSubprocess, ExtraEnvironmentReplacesAnInheritedVariable) {
  const char* saved = std::getenv("TMPDIR");
  std::string old_value = saved != nullptr ? saved : "";
  ::setenv("TMPDIR", "/gp-own-tmp", 1);
  auto o = cmd({"env"});
  o.extra_env = {"TMPDIR=/proc/1/root/tmp"};
  auto r = run_ok(o);
  if (saved != nullptr) ::setenv("TMPDIR", old_value.c_str(), 1);
  else ::unsetenv("TMPDIR");
  EXPECT_EQ(r.out.find("TMPDIR=/gp-own-tmp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TMPDIR=/proc/1/root/tmp\n"), std::string::npos) << r.out;
}

TEST(RuntimeSubprocess, ResourceLimitsApplyToTheChild) {
  auto o = cmd({"sh", "-c", "ulimit -v; ulimit -t"});
  o.address_space_bytes = 512ull << 20;
  o.cpu_seconds = 7;
  auto r = run_ok(o);
  EXPECT_EQ(r.out, "524288\n7\n");
}

TEST(RuntimeSubprocess, DescriptorsAreNotInherited) {
  auto r = run_ok(cmd({"sh", "-c", "ls /proc/self/fd"}));
  // 0, 1, 2 and the fd ls itself opens for the directory.
  EXPECT_EQ(r.out, "0\n1\n2\n3\n");
}

TEST(RuntimeSubprocess, WorkingDirectory) {
  auto o = cmd({"pwd"});
  o.cwd = "/usr";
  auto r = run_ok(o);
  EXPECT_EQ(r.out, "/usr\n");
}

}  // namespace
}  // namespace gp::runtime
