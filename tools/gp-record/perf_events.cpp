// perf_event_open helpers shared by the BPF and the perf samplers.
#include "perf_events.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gp::record_tool {

namespace {

struct EventName {
  const char* name;
  uint32_t type;
  uint64_t config;
};

constexpr EventName kEvents[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
};

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

PerfFd& PerfFd::operator=(PerfFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

PerfFd::~PerfFd() {
  if (fd_ >= 0) close(fd_);
}

bool perf_event_spec(const std::string& event, uint32_t* type, uint64_t* config) {
  for (const auto& e : kEvents) {
    if (event == e.name) {
      *type = e.type;
      *config = e.config;
      return true;
    }
  }
  return false;
}

const std::vector<std::string>& perf_event_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : kEvents) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

void disable_events(const std::vector<PerfFd>& fds) {
  for (const PerfFd& fd : fds) ioctl(fd.get(), PERF_EVENT_IOC_DISABLE, 0);
}

uint32_t max_sample_rate() {
  std::string line = read_first_line("/proc/sys/kernel/perf_event_max_sample_rate");
  return line.empty() ? 0 : static_cast<uint32_t>(std::strtoul(line.c_str(), nullptr, 10));
}

Result<perf_event_attr> sampling_attr(const SamplerConfig& config) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  uint64_t event_config = 0;
  if (!perf_event_spec(config.event, &attr.type, &event_config))
    return make_error("unknown event '" + config.event + "'");
  attr.config = event_config;
  if (config.period > 0) {
    attr.sample_period = config.period;
    return attr;
  }
  uint32_t limit = max_sample_rate();
  if (limit != 0 && config.frequency_hz > limit)
    return make_error("frequency " + std::to_string(config.frequency_hz) +
                      " Hz is above kernel.perf_event_max_sample_rate (" + std::to_string(limit) +
                      ")");
  attr.freq = 1;
  attr.sample_freq = config.frequency_hz;
  return attr;
}

Result<PerfFd> open_perf_event(perf_event_attr& attr, int pid, int cpu, const SamplerConfig& config,
                               std::string* hint) {
  int fd =
      static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd >= 0) return PerfFd(fd);
  int err = errno;
  std::string target = pid >= 0 ? "thread " + std::to_string(pid) : "cpu " + std::to_string(cpu);
  if (err == EACCES || err == EPERM) {
    *hint = "try 'sysctl kernel.perf_event_paranoid=1' (now " +
            read_first_line("/proc/sys/kernel/perf_event_paranoid") +
            "), or run as root (or with CAP_PERFMON)";
  } else if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV) &&
             attr.type == PERF_TYPE_HARDWARE) {
    *hint = "this machine's PMU has no '" + config.event +
            "' event (common in VMs): use --event cpu-clock";
  }
  auto error = make_error("cannot open perf event '" + config.event + "' on " + target + ": " +
                          std::strerror(err));
  errno = err;  // callers skip offline CPUs (ENODEV) and ended threads (ESRCH)
  return error;
}

std::vector<int> sampled_cpus(const SamplerConfig& config) {
  if (!config.cpus.empty()) return config.cpus;
  std::vector<int> cpus;
  long n = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < n; ++cpu) cpus.push_back(cpu);
  return cpus;
}

}  // namespace gp::record_tool
