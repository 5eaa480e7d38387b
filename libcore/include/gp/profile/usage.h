#pragma once
// gProfiler's --log-usage (gprofiler/usage_loggers.py): after each session, the CPU time and
// memory the profiler used. gProfiler reads its container's cgroup (and refuses to run outside
// one); gp-profile counts itself and the children it waited for (getrusage), and its memory is
// its resident set with the largest child's peak.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace gp::profile {

struct UsageSnapshot {
  double cpu_s = 0;               // user + system seconds, gp-profile and its reaped children
  uint64_t rss_bytes = 0;         // gp-profile's resident set now
  uint64_t child_peak_bytes = 0;  // the largest peak resident set of a reaped child
  std::chrono::steady_clock::time_point at{};
};

UsageSnapshot read_usage();

// The resident set of process `pid` (0: this one) from /proc/PID/status, in bytes; 0 when it is
// gone.
uint64_t resident_bytes(int pid);

// "CPU usage this cycle: 1.234 seconds 2.06% (gp-profile and its children); memory: 12.345 MB,
// largest child's peak 40.000 MB (diff +1.000 MB)", as gProfiler's log_cycle lines.
std::string describe_usage_cycle(const UsageSnapshot& before, const UsageSnapshot& now);

class UsageLog {
 public:
  // The line for the cycle since the previous call (or since construction).
  std::string cycle();

 private:
  UsageSnapshot last_ = read_usage();
};

}  // namespace gp::profile
