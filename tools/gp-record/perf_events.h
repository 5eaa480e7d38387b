#pragma once
// perf_event_open plumbing shared by both samplers: event names, per-CPU sampling events in
// frequency mode, errno -> hint.

#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "gp/util/result.h"
#include "sampler.h"

namespace gp::record_tool {

// RAII owner of a perf event fd.
class PerfFd {
 public:
  PerfFd() = default;
  explicit PerfFd(int fd) : fd_(fd) {}
  PerfFd(PerfFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  PerfFd& operator=(PerfFd&& o) noexcept;
  PerfFd(const PerfFd&) = delete;
  PerfFd& operator=(const PerfFd&) = delete;
  ~PerfFd();
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// The attr for sampling config.event at config.frequency_hz (the caller adds sample_type etc.).
Result<perf_event_attr> sampling_attr(const SamplerConfig& config);

// perf_event_open(attr, pid, cpu). On failure the error names the target ("cpu 3", "thread 42")
// and the errno text, and *hint says what to change when that is known.
Result<PerfFd> open_perf_event(perf_event_attr& attr, int pid, int cpu, const SamplerConfig& config,
                               std::string* hint);

// Disables every event (PERF_EVENT_IOC_DISABLE): no sample is taken after this returns.
void disable_events(const std::vector<PerfFd>& fds);

// kernel.perf_event_max_sample_rate, 0 when unreadable.
uint32_t max_sample_rate();

}  // namespace gp::record_tool
