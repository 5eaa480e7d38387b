#pragma once
// gProfiler's --diagnostics (gprofiler/diagnostics.py, log_diagnostics): after a session, at most
// once per kDiagnosticsInterval, the processes that run and the kernel's last log lines, so that a
// problem on a host can be understood from its log.

#include <chrono>
#include <string>

namespace gp::profile {

inline constexpr std::chrono::minutes kDiagnosticsInterval{15};  // gProfiler's 15 * 60 s

// One line per process of `proc_root`: "pid=1 ppid=0 comm='systemd' exe='/usr/lib/systemd/
// systemd' uid=0 threads=1 rss_kb=12345 cmdline='/sbin/init'" (gProfiler's _process_info fields
// that /proc gives without sampling); processes gone while read are left out.
std::string process_listing(const std::string& proc_root = "/proc");

// The kernel log's last `lines` lines (dmesg -T), or why there are none.
std::string kernel_log_tail(size_t lines = 100);

}  // namespace gp::profile
