// perf_event_open helpers shared by the BPF and the perf samplers.
#include "perf_events.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

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

namespace {

constexpr const char* kPmuDir = "/sys/bus/event_source/devices/";

std::optional<uint64_t> parse_number(const std::string& text, int base) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, base);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// Places `value` into spec's config words as a PMU format line says ("config:0-7,21",
// "config1:0-63"): its low bits into the first range, the next ones into the next.
Status apply_format(const std::string& format, uint64_t value, EventSpec* spec) {
  size_t colon = format.find(':');
  if (colon == std::string::npos) return make_error("malformed format '" + format + "'");
  std::string word = format.substr(0, colon);
  uint64_t* target = word == "config"    ? &spec->config
                     : word == "config1" ? &spec->config1
                     : word == "config2" ? &spec->config2
                                         : nullptr;
  if (target == nullptr) return make_error("format of unknown field '" + word + "'");
  std::stringstream ranges(format.substr(colon + 1));
  std::string range;
  while (std::getline(ranges, range, ',')) {
    size_t dash = range.find('-');
    auto lo = parse_number(range.substr(0, dash), 10);
    auto hi = dash == std::string::npos ? lo : parse_number(range.substr(dash + 1), 10);
    if (!lo || !hi || *hi < *lo || *hi > 63) return make_error("malformed format '" + format + "'");
    for (uint64_t bit = *lo; bit <= *hi; ++bit, value >>= 1) *target |= (value & 1) << bit;
  }
  if (value != 0) return make_error("value too large for format '" + format + "'");
  return ok_status();
}

// "PMU/term=value,.../" (perf's syntax): the PMU's type and its terms.
Status parse_pmu_event(const std::string& text, EventSpec* spec) {
  size_t slash = text.find('/');
  std::string pmu = text.substr(0, slash);
  if (pmu.empty() || pmu.find_first_of(". ") != std::string::npos || text.back() != '/')
    return make_error("malformed PMU event (PMU/term=value,.../)");
  std::string dir = std::string(kPmuDir) + pmu + "/";
  auto type = parse_number(read_first_line((dir + "type").c_str()), 10);
  if (!type) return make_error("no PMU '" + pmu + "' in " + kPmuDir);
  spec->type = static_cast<uint32_t>(*type);
  std::stringstream terms(text.substr(slash + 1, text.size() - slash - 2));
  std::string term;
  while (std::getline(terms, term, ',')) {
    if (term.empty()) continue;
    size_t eq = term.find('=');
    std::string name = term.substr(0, eq);
    auto value =
        eq == std::string::npos ? std::optional<uint64_t>(1) : parse_number(term.substr(eq + 1), 0);
    if (!value) return make_error("term '" + term + "' has no number");
    if (name == "config") spec->config = *value;
    else if (name == "config1") spec->config1 = *value;
    else if (name == "config2") spec->config2 = *value;
    else {
      if (name.empty() || name.find_first_of("./") != std::string::npos)
        return make_error("malformed term '" + term + "'");
      std::string format = read_first_line((dir + "format/" + name).c_str());
      if (format.empty()) return make_error("PMU '" + pmu + "' has no term '" + name + "'");
      if (auto st = apply_format(format, *value, spec); !st) return st;
    }
  }
  return ok_status();
}

// perf's modifiers after the last ':': p (up to three), u, k.
Status apply_modifiers(const std::string& mods, EventSpec* spec) {
  bool user = false, kernel = false;
  for (char c : mods) {
    if (c == 'p' && spec->precise_ip < 3) ++spec->precise_ip;
    else if (c == 'u') user = true;
    else if (c == 'k') kernel = true;
    else return make_error("unknown modifier '" + mods + "' (p, pp, ppp, u, k)");
  }
  spec->exclude_kernel = user && !kernel;
  spec->exclude_user = kernel && !user;
  return ok_status();
}

}  // namespace

Result<EventSpec> parse_event(const std::string& event) {
  EventSpec spec;
  std::string body = event;
  size_t colon = event.rfind(':');
  if (colon != std::string::npos && event.find('/', colon) == std::string::npos) {
    body = event.substr(0, colon);
    if (auto st = apply_modifiers(event.substr(colon + 1), &spec); !st) return st.error();
  }
  for (const auto& e : kEvents) {
    if (body == e.name) {
      spec.type = e.type;
      spec.config = e.config;
      return spec;
    }
  }
  if (body.find('/') != std::string::npos) {
    if (auto st = parse_pmu_event(body, &spec); !st) return st.error();
    return spec;
  }
  if (body.size() > 1 && body[0] == 'r') {
    auto config = parse_number(body.substr(1), 16);
    if (!config) return make_error("malformed raw event (rHEX, e.g. r01b7)");
    spec.type = PERF_TYPE_RAW;
    spec.config = *config;
    return spec;
  }
  std::string names;
  for (const auto& e : kEvents) names += std::string(names.empty() ? "" : ", ") + e.name;
  return make_error("unknown event (" + names + ", rHEX or PMU/term=value,.../)");
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
  auto spec = parse_event(config.event);
  if (!spec) return make_error("event '" + config.event + "': " + spec.error().message);
  attr.type = spec->type;
  attr.config = spec->config;
  attr.config1 = spec->config1;
  attr.config2 = spec->config2;
  attr.precise_ip = spec->precise_ip;
  attr.exclude_user = spec->exclude_user;
  attr.exclude_kernel = spec->exclude_kernel;
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
             attr.type != PERF_TYPE_SOFTWARE && attr.type != PERF_TYPE_TRACEPOINT) {
    *hint = "this machine's PMU has no '" + config.event +
            "' event (common in VMs): use --event cpu-clock";
  } else if (err == EINVAL && attr.precise_ip > 0) {
    *hint = "this PMU may not sample '" + config.event + "' precisely: try it without ':p'";
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
