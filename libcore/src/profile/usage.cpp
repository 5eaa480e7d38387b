// gp-profile --log-usage (see usage.h).
#include "gp/profile/usage.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace gp::profile {
namespace {

double seconds(const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; }

}  // namespace

uint64_t resident_bytes(int pid) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/status")
                            : "/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    uint64_t kb = 0;
    fields >> kb;
    return kb * 1024;
  }
  return 0;
}

namespace {

std::string mb(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f MB", bytes / double(1 << 20));
  return buf;
}

}  // namespace

UsageSnapshot read_usage() {
  UsageSnapshot s;
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  s.cpu_s = seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) +
            seconds(children.ru_stime);
  s.rss_bytes = resident_bytes(0);
  s.child_peak_bytes = static_cast<uint64_t>(children.ru_maxrss) * 1024;  // KiB on Linux
  s.at = std::chrono::steady_clock::now();
  return s;
}

std::string describe_usage_cycle(const UsageSnapshot& before, const UsageSnapshot& now) {
  double cpu = now.cpu_s - before.cpu_s;
  double wall = std::chrono::duration<double>(now.at - before.at).count();
  char head[160];
  std::snprintf(head, sizeof head,
                "CPU usage this cycle: %.3f seconds %.2f%% (gp-profile and its children)", cpu,
                wall > 0 ? cpu / wall * 100 : 0.0);
  double diff = double(now.rss_bytes) - double(before.rss_bytes);
  std::string diff_text = "no diff";
  if (diff != 0) {
    char d[64];
    std::snprintf(d, sizeof d, "diff %+.3f MB", diff / double(1 << 20));
    diff_text = d;
  }
  return std::string(head) + "; memory usage: " + mb(double(now.rss_bytes)) + " (" + diff_text +
         "), largest child's peak " + mb(double(now.child_peak_bytes));
}

std::string UsageLog::cycle() {
  UsageSnapshot now = read_usage();
  std::string line = describe_usage_cycle(last_, now);
  last_ = now;
  return line;
}

}  // namespace gp::profile
