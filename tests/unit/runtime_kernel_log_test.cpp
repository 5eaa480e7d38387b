// The kernel log reader of gProfiler's Java safemode: /dev/kmsg records and the OOM-kill and
// fatal-fault messages, in the kernel's own formats (cited per test) as gProfiler's patterns
// (granulate_utils/linux/oom.py KILLED_PROCESS, signals.py SHOW_SIGNAL_X86/_AARCH64) read them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "gp/runtime/kernel_log.h"

namespace gp::test::runtime_kernel_log {
namespace {

using gp::runtime::KernelEventKind;
using gp::runtime::kmsg_message;
using gp::runtime::parse_kernel_event;

// Documentation/ABI/testing/dev-kmsg: "LEVEL,SEQ,USEC,FLAGS[,caller=...];MESSAGE\n" then
// " KEY=VALUE" dictionary lines.
TEST(KernelLog, RecordMessageIsBetweenTheSemicolonAndTheFirstNewline) {
  EXPECT_EQ(kmsg_message("6,339,5140900,-;NET: Registered protocol family 10\n"),
            "NET: Registered protocol family 10");
  EXPECT_EQ(kmsg_message("7,492,1207557,-,caller=T1;ahci 0000:00:0d.0: version 3.0\n"
                         " SUBSYSTEM=pci\n DEVICE=+pci:0000:00:0d.0\n"),
            "ahci 0000:00:0d.0: version 3.0");
  EXPECT_EQ(kmsg_message("no prefix"), "no prefix");
}

// mm/oom_kill.c __oom_kill_process: "%s: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB,
// file-rss:%lukB, shmem-rss:%lukB, UID:%u pgtables:%lukB oom_score_adj:%hd" with "Out of
// memory" or "Memory cgroup out of memory"; older kernels stop after shmem-rss.
TEST(KernelLog, OomKillGivesThePidAndComm) {
  auto e = parse_kernel_event(
      "Memory cgroup out of memory: Killed process 4242 (java) total-vm:2855864kB, "
      "anon-rss:98112kB, file-rss:18432kB, shmem-rss:0kB, UID:0 pgtables:544kB oom_score_adj:0");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, KernelEventKind::oom_kill);
  EXPECT_EQ(e->pid, 4242);
  EXPECT_EQ(e->comm, "java");
  // gProfiler's own example (oom.py), and a comm of 15 characters holding ") " (the
  // pattern's .{0,15}).
  e = parse_kernel_event(
      "Out of memory: Killed process 765074 (chrome) total-vm:38565352kB, anon-rss:209356kB, "
      "file-rss:1624kB, shmem-rss:0kB");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 765074);
  e = parse_kernel_event(
      "Out of memory: Killed process 7 (a) b) c) d) e)x) total-vm:1kB, anon-rss:2kB, "
      "file-rss:3kB, shmem-rss:4kB, UID:0 pgtables:4kB oom_score_adj:0");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->comm, "a) b) c) d) e)x");
  EXPECT_EQ(e->pid, 7);
  // 16 characters cannot be a comm.
  EXPECT_FALSE(
      parse_kernel_event("Out of memory: Killed process 7 (abcdefghijklmnop) "
                         "total-vm:1kB, anon-rss:2kB, file-rss:3kB, shmem-rss:4kB"));
}

// The lines around the kill name the pid too, but are not kills: dump_header's "invoked
// oom-killer", the task list, oom-kill's summary, and the reaper's report.
TEST(KernelLog, OtherOomLinesAreNotKills) {
  for (const char* line : {
           "java invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
           "[   4242]     0  4242   713966    24528   462848        0             0 java",
           "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
           "oom_memcg=/gp,task_memcg=/gp,task=java,pid=4242,uid=0",
           "oom_reaper: reaped process 4242 (java), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
           "Killed process 4242 (java) total-vm:2855864kB",
       })
    EXPECT_FALSE(parse_kernel_event(line)) << line;
}

// arch/x86/mm/fault.c show_signal_msg: "%s[%d]: segfault at %lx ip %px sp %px error %lx", then
// print_vma_addr's " in %s[%lx+%lx]" and " likely on CPU %d (core %d, socket %d)".
TEST(KernelLog, X86SegfaultGivesThePid) {
  auto e = parse_kernel_event(
      "java[4242]: segfault at 0 ip 00007f3c2d8a1136 sp 00007f3c0c1fe9f0 error 6 in "
      "libjvm.so[7f3c2d000000+1000000] likely on CPU 1 (core 1, socket 0)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, KernelEventKind::fatal_signal);
  EXPECT_EQ(e->pid, 4242);
  EXPECT_EQ(e->comm, "java");
}

// Lines this project's test machine logged (Linux 6.18), where print_vma_addr gives the
// offset too ("[OFFSET,START+SIZE]"; the x86 pattern's VMA part is optional).
TEST(KernelLog, RecordedLinesOfLinux618) {
  auto e = parse_kernel_event(kmsg_message(
      "6,2035,27411430272,-;gp-record[29353]: segfault at a0000052ba ip 00007f85c88b6f0a sp "
      "00007ffeae5f4a20 error 4 in libc.so.6[98f0a,7f85c8844000+156000] likely on CPU 1 (core 1, "
      "socket 0)\n"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 29353);
  EXPECT_EQ(e->comm, "gp-record");
  e = parse_kernel_event(
      "traps: gp-record[29512] general protection fault ip:7feaf46b6f0a sp:7ffc80a61bb0 error:0 "
      "in libc.so.6[98f0a,7feaf4644000+156000]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 29512);
  e = parse_kernel_event(
      "Memory cgroup out of memory: Killed process 15359 (java) total-vm:2808596kB, "
      "anon-rss:152576kB, file-rss:20148kB, shmem-rss:0kB, UID:0 pgtables:528kB oom_score_adj:0");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 15359);
  EXPECT_FALSE(parse_kernel_event(
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/"
      "oom44-exp,task_memcg=/oom44-exp,task=java,pid=15359,uid=0"));
}

// arch/x86/kernel/traps.c show_signal (pr_fmt "traps: "): "%s[%d] %s%s ip:%lx sp:%lx
// error:%lx" and print_vma_addr.
TEST(KernelLog, X86TrapGivesThePid) {
  auto e = parse_kernel_event(
      "traps: VM Thread[977] general protection fault ip:7f3c2d8a1136 sp:7f3c0c1fe9f0 error:0 "
      "in libjvm.so[7f3c2d000000+1000000]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 977);
  EXPECT_EQ(e->comm, "VM Thread");
  e = parse_kernel_event("traps: a.out[1234] trap divide error ip:401136 sp:7ffd2f0c1e70 error:0");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 1234);
}

// arch/arm64/kernel/traps.c arm64_show_signal: "%s[%d]: unhandled exception: " then the ESR's
// class and value, the reason, and " in %s[%lx+%lx]".
TEST(KernelLog, Arm64UnhandledExceptionGivesThePid) {
  auto e = parse_kernel_event(
      "java[160760]: unhandled exception: DABT (lower EL), ESR 0x0000000092000044, level 0 "
      "translation fault in libjvm.so[ffff8a000000+1000000]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, KernelEventKind::fatal_signal);
  EXPECT_EQ(e->pid, 160760);
  EXPECT_EQ(e->comm, "java");
}

// kernel/signal.c print_fatal_signal ("%s/%d: potentially unexpected fatal signal %d.", only
// with kernel.print-fatal-signals) has no pattern in gProfiler, nor do ordinary lines.
TEST(KernelLog, OtherMessagesAreNothing) {
  for (const char* line : {
           "java/4242: potentially unexpected fatal signal 11.",
           "NET: Registered protocol family 10",
           "audit: type=1400 audit(1700000000.123:45): apparmor=\"DENIED\" pid=4242",
           "java[4242]: segfault at 0",
       })
    EXPECT_FALSE(parse_kernel_event(line)) << line;
}

// The reader starts at the end: what a file held when opened is not read (a regular file
// stands in for /dev/kmsg here; each read of the device is one record, of a file the rest).
TEST(KernelLog, ReadsOnlyWhatFollowsOpen) {
  std::string path = ::testing::TempDir() + "/kmsg-" + std::to_string(getpid());
  { std::ofstream(path) << "6,1,1,-;before\n"; }
  auto log = gp::runtime::KernelLog::open(path);
  ASSERT_TRUE(log) << log.error().message;
  std::vector<std::string> got;
  { std::ofstream(path, std::ios::app) << "6,2,2,-;after\n"; }
  EXPECT_EQ(log->read_new([&](std::string_view m) { got.emplace_back(m); }), 0u);
  EXPECT_EQ(got, std::vector<std::string>{"after"});
  std::remove(path.c_str());
  EXPECT_FALSE(gp::runtime::KernelLog::open(path));
}

}  // namespace
}  // namespace gp::test::runtime_kernel_log
