// gp-profile --log-usage: the line logged after each session.
#include "gp/profile/usage.h"

#include <gtest/gtest.h>

namespace gp::profile {
namespace {

TEST(LogUsage, CpuShareOfTheCycleAndMemoryAsGprofilerWritesThem) {
  UsageSnapshot before, now;
  before.cpu_s = 1.0;
  now.cpu_s = 1.5;
  now.at = before.at + std::chrono::seconds(10);
  before.rss_bytes = 10u << 20;
  now.rss_bytes = 11u << 20;
  now.child_peak_bytes = 40u << 20;
  EXPECT_EQ(describe_usage_cycle(before, now),
            "CPU usage this cycle: 0.500 seconds 5.00% (gp-profile and its children); memory "
            "usage: 11.000 MB (diff +1.000 MB), largest child's peak 40.000 MB");
  now.rss_bytes = before.rss_bytes;
  EXPECT_NE(describe_usage_cycle(before, now).find("10.000 MB (no diff)"), std::string::npos);
}

TEST(LogUsage, CountsThisProcess) {
  UsageLog log;
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + i;
  UsageSnapshot s = read_usage();
  EXPECT_GT(s.cpu_s, 0.0);
  EXPECT_GT(s.rss_bytes, 0u);
  EXPECT_EQ(log.cycle().rfind("CPU usage this cycle: ", 0), 0u);
}

}  // namespace
}  // namespace gp::profile
