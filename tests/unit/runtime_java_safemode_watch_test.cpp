// gProfiler's kernel-reported Java safemode causes (gprofiler/profilers/java.py
// _handle_kernel_messages, _proc_exit_callback; granulate_utils/java.py
// java_exit_code_to_signo, is_java_fatal_signal): which cause each report gives.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>

#include "gp/runtime/java_safemode_watch.h"

namespace gp::test::runtime_java_safemode_watch {
namespace {

using namespace gp::runtime;

const char* kOom =
    "Memory cgroup out of memory: Killed process 4242 (java) total-vm:2855864kB, "
    "anon-rss:98112kB, file-rss:18432kB, shmem-rss:0kB, UID:0 pgtables:544kB oom_score_adj:0";
const char* kSegv =
    "java[4242]: segfault at 0 ip 00007f3c2d8a1136 sp 00007f3c0c1fe9f0 error 6 in "
    "libjvm.so[7f3c2d000000+1000000]";

std::optional<SafemodeVerdict> verdict(const char* line, std::vector<int> profiled) {
  return kernel_message_verdict(
      line,
      [&](int pid) { return std::find(profiled.begin(), profiled.end(), pid) != profiled.end(); },
      [&] { return profiled; });
}

TEST(JavaSafemodeWatch, KernelReportsOfAProfiledJvmAreProfiledCauses) {
  auto v = verdict(kOom, {4242});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "profiled-oom");
  EXPECT_EQ(v->warning, "Profiled Java process OOM (pid 4242, comm java)");
  v = verdict(kSegv, {4242});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "profiled-signaled");
  EXPECT_EQ(v->warning, "Profiled Java process fatally signaled (pid 4242, comm java)");
}

TEST(JavaSafemodeWatch, KernelReportsOfOtherProcessesAreGeneralCauses) {
  auto v = verdict(kOom, {17});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "general-oom");
  v = verdict(kSegv, {});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "general-signaled");
  // gProfiler's substring test of a profiled pid in any other line.
  v = verdict("[   4242]     0  4242   713966    24528   462848        0             0 java", {42});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "pid-in-kernel-messages");
  EXPECT_FALSE(verdict("NET: Registered protocol family 10", {4242}));
}

TEST(JavaSafemodeWatch, ExitStatusSignalsAsGprofilerReadsThem) {
  EXPECT_EQ(java_exit_signal(SIGKILL), SIGKILL);         // WIFSIGNALED
  EXPECT_EQ(java_exit_signal(SIGABRT | 0x80), SIGABRT);  // with a core dump
  EXPECT_EQ(java_exit_signal(143u << 8), SIGTERM);       // the JVM's exit(143)
  EXPECT_EQ(java_exit_signal(1u << 8), 0);               // exit(1)
  EXPECT_EQ(java_exit_signal(0), 0);
  for (int sig : {SIGABRT, SIGKILL, SIGSEGV}) EXPECT_TRUE(is_java_fatal_signal(sig)) << sig;
  for (int sig : {SIGTERM, SIGINT, SIGQUIT, SIGBUS, SIGHUP})
    EXPECT_FALSE(is_java_fatal_signal(sig));
}

TEST(JavaSafemodeWatch, ProfiledJvmExitIsSignaledOnlyForAFatalSignal) {
  auto v = profiled_exit_verdict(ProcExit{4242, 4242, SIGKILL});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "profiled-signaled");
  EXPECT_EQ(v->warning, "async-profiled Java process exited with signal (pid 4242, signal 9)");
  v = profiled_exit_verdict(ProcExit{4242, 4242, 143u << 8});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, "");
  EXPECT_FALSE(profiled_exit_verdict(ProcExit{4242, 4242, 0}));
}

TEST(JavaSafemodeWatch, NeededOnlyForKernelCauses) {
  EXPECT_FALSE(JavaSafemodeWatch::needed({"hserr", "ap-loaded-check"}));
  EXPECT_TRUE(JavaSafemodeWatch::needed({"hserr", "profiled-signaled"}));
  EXPECT_TRUE(JavaSafemodeWatch::needed({"general-oom"}));
}

}  // namespace
}  // namespace gp::test::runtime_java_safemode_watch
