// host_info (libcore/src/proc/host_info.cpp) against the running host.

#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gp/elf/build_id.h"
#include "gp/proc/process.h"

namespace gp::test::proc {
namespace {

std::string command_output(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(HostInfo, DescribesThisHost) {
  const model::HostInfo h = gp::proc::host_info();
  utsname u{};
  ASSERT_EQ(::uname(&u), 0);
  EXPECT_EQ(h.hostname, u.nodename);
  EXPECT_EQ(h.kernel_release, u.release);
  EXPECT_EQ(h.kernel_version, u.version);
  EXPECT_EQ(h.machine, u.machine);
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot);
  EXPECT_EQ(h.boot_id, boot);
  EXPECT_EQ(h.boot_id.size(), 36u);
  EXPECT_EQ(h.cpu_count, static_cast<uint32_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(h.os_release, command_output(". /etc/os-release && printf %s \"$PRETTY_NAME\""));
}

TEST(HostInfo, KernelBuildIdMatchesPerf) {
  const std::string perf = command_output("perf buildid-list -k 2>/dev/null");
  if (perf.empty())
    GTEST_SKIP() << "perf buildid-list -k gave nothing (perf missing or no /sys/kernel/notes)";
  EXPECT_EQ(gp::elf::build_id_hex(gp::proc::host_info().kernel_build_id), perf);
}

}  // namespace
}  // namespace gp::test::proc
