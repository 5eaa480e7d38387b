#pragma once
// What gProfiler's agent puts in every .col header that gp-fold cannot know (gprofiler.md
// §2.3, §7.4): the agent's static metadata (its SystemInfo: hypervisor, CPU model and count,
// memory, distribution, libc, network identity, spawn time), its run arguments, and the
// session's system metrics (cpu_avg and mem_avg, computed from /proc as psutil does).

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gp/profile/hw_metrics.h"
#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::profile {

// /etc/os-release as the `distro` package reads it: NAME, VERSION_ID, VERSION_CODENAME (or
// the word in parentheses of VERSION); "unknown" for what is missing.
struct OsRelease {
  std::string name = "unknown", version = "unknown", codename = "unknown";
};
OsRelease parse_os_release(std::string_view text);

// /proc/cpuinfo: the first "model name", the first "flags" (x86) or "Features" (arm64) line,
// and gProfiler's Intel platform code from "cpu family" 6 and "model" (ICX, SPR, EMR, GNR,
// else UNKNOWN).
struct CpuInfo {
  std::string model_name = "unknown", flags = "unknown", arch_codename = "UNKNOWN";
  bool hypervisor_flag = false;
};
CpuInfo parse_cpuinfo(std::string_view text);

// `ldd --version` output → (libc_type, libc_version), gProfiler's three patterns.
std::pair<std::string, std::string> parse_ldd_version(std::string_view text);

// The gProfiler release whose agent protocol gp-profile speaks. The Studio keys behaviour on
// metadata.agent_version (it keeps a gpid only for agents from 1.2.3 on), so gp-profile
// reports this as agent_version and its own version as gp_version.
inline constexpr const char* kGprofilerAgentVersion = "1.57.1";

// The agent's static metadata object (cloud_provider, agent_version, spawn_time and every
// SystemInfo field). `spawn_time` is UNIX seconds; `run_arguments` goes in as it is.
json::Value static_metadata(int64_t spawn_time, const json::Value& run_arguments);

// gProfiler uses an --external-metadata file only while it was modified at most 5 minutes
// ago: a stale file stops the start, and later sessions go without it.
inline constexpr std::chrono::seconds kExternalMetadataMaxAge{300};
// Seconds since `path` was last modified; an error naming it when it cannot be stat'ed.
Result<std::chrono::seconds> file_age(const std::string& path);

// Aggregate CPU times of the first line of /proc/stat (USER_HZ ticks).
struct CpuTimes {
  uint64_t total = 0;  // every field except guest and guest_nice (counted in user/nice)
  uint64_t busy = 0;   // total - idle - iowait
};
std::optional<CpuTimes> parse_proc_stat(std::string_view text);
// psutil.cpu_percent between two readings, rounded to 0.1; 0 when nothing was busy.
double cpu_percent(const CpuTimes& before, const CpuTimes& after);
// psutil.virtual_memory().percent: (MemTotal - MemAvailable) / MemTotal, rounded to 0.1.
std::optional<double> memory_percent(std::string_view meminfo);

// gProfiler's SystemMetricsMonitor: memory polled every `interval` on a thread, CPU since the
// previous take(). take() returns {cpu_avg, mem_avg} and starts the next period.
class MetricsMonitor {
 public:
  explicit MetricsMonitor(std::chrono::milliseconds interval = std::chrono::seconds(5));
  ~MetricsMonitor();
  MetricsMonitor(const MetricsMonitor&) = delete;
  MetricsMonitor& operator=(const MetricsMonitor&) = delete;

  struct Metrics {
    std::optional<double> cpu_avg, mem_avg;
  };
  Metrics take();

 private:
  void poll();
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::vector<double> memory_;
  std::optional<CpuTimes> last_cpu_;
  bool stop_ = false;
  std::thread thread_;
};

// Rewrites the header line of the .col at `path`: `agent` members are set in its metadata
// (over gp-fold's), metadata.current_time becomes `current_time`, and the top-level
// "metrics" holds `metrics` (null members when absent). The stacks are kept byte for byte.
// (`current_time` empty: not set.) With `hw`: its data and page are the header's "hwmetrics"
// and "htmlblob" (hw_metrics.h).
Status apply_agent_header(const std::string& path, const json::Value& agent,
                          const std::string& current_time, const MetricsMonitor::Metrics& metrics,
                          const HwMetrics* hw = nullptr);

}  // namespace gp::profile
