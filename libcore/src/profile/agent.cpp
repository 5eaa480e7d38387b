// The agent's metadata and metrics in gProfiler's shapes (gprofiler.md §2.3, §7.4).
#include "gp/profile/agent.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "gp/profile/child.h"
#include "gp/util/subprocess.h"
#include "gp/util/version.h"

namespace gp::profile {
namespace {

using json::Value;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

std::string unquote(std::string_view v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    v = v.substr(1, v.size() - 2);
  return std::string(v);
}

double round1(double v) { return std::round(v * 10.0) / 10.0; }

// gProfiler's get_hypervisor_vendor: "NONE" without the cpuinfo "hypervisor" flag, else the
// vendor string of CPUID leaf 0x40000000 ("KVMKVMKVM", "VMwareVMware"...), or "VM-UNKNOWN".
std::string hypervisor_vendor(bool flag) {
  if (!flag) return "NONE";
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0x40000000, a, b, c, d);
  char vendor[13] = {0};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &c, 4);
  std::memcpy(vendor + 8, &d, 4);
  std::string s(vendor);
  bool blank = s.find_first_not_of(" \t") == std::string::npos;
  return blank ? "VM-UNKNOWN" : s;
#else
  return "VM-UNKNOWN";
#endif
}

// `ldd --version` through gp's one spawner (was popen: a shell, inherited descriptors, no
// time limit). musl's loader prints its version on stderr, glibc's ldd on stdout.
std::string ldd_output() {
  util::SpawnOptions o;
  o.argv = {"ldd", "--version"};
  util::RunLimits limits;
  limits.timeout = std::chrono::seconds(5);
  limits.max_output_bytes = 64 << 10;
  auto r = util::run(std::move(o), limits);
  if (!r) return "ldd not found";
  return r->out + r->err;
}

// gProfiler's get_local_ip: the source address of a UDP "connection" to 8.8.8.8 (no packet).
std::string local_ip() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "unknown";
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(53);
  ::inet_pton(AF_INET, "8.8.8.8", &dst.sin_addr);
  std::string ip = "unknown";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) == 0) {
    sockaddr_in self{};
    socklen_t len = sizeof self;
    char buf[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) == 0 &&
        ::inet_ntop(AF_INET, &self.sin_addr, buf, sizeof buf) != nullptr)
      ip = buf;
  }
  ::close(fd);
  return ip;
}

// gProfiler's get_mac_address: the first non-loopback interface's, upper case.
std::string mac_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "unknown";
  std::string mac = "unknown";
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if ((a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    std::string text = read_text("/sys/class/net/" + std::string(a->ifa_name) + "/address");
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (text.size() != 17) continue;
    for (char& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    mac = text;
    break;
  }
  ::freeifaddrs(list);
  return mac;
}

std::string iso(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// gProfiler's get_run_mode (its container images set these variables).
std::string run_mode() {
  if (std::getenv("GPROFILER_IN_K8S") != nullptr) return "k8s";
  if (std::getenv("GPROFILER_IN_CONTAINER") != nullptr) return "container";
  return "standalone_executable";
}

}  // namespace

OsRelease parse_os_release(std::string_view text) {
  OsRelease r;
  std::string version_text;
  for (std::string_view line : lines_of(text)) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = line.substr(0, eq);
    std::string value = unquote(line.substr(eq + 1));
    if (value.empty()) continue;
    if (key == "NAME") r.name = value;
    else if (key == "VERSION_ID") r.version = value;
    else if (key == "VERSION_CODENAME") r.codename = value;
    else if (key == "VERSION") version_text = value;
  }
  if (r.codename == "unknown") {
    // VERSION="12 (bookworm)" or VERSION="20.04.6 LTS (Focal Fossa)".
    size_t open = version_text.find('('), close = version_text.find(')');
    if (open != std::string::npos && close != std::string::npos && close > open + 1)
      r.codename = version_text.substr(open + 1, close - open - 1);
  }
  return r;
}

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo c;
  bool have_model = false, have_flags = false;
  long family = -1, model = -1;
  static const std::regex field_re(R"(^((?:model name)|(?:flags)|(?:Features))[ \t]*: (.*)$)");
  for (std::string_view line : lines_of(text)) {
    std::string l(line);
    std::smatch m;
    if (std::regex_match(l, m, field_re)) {
      if (m[1] == "model name" && !have_model) {
        c.model_name = m[2];
        have_model = true;
      } else if (m[1] != "model name" && !have_flags) {
        c.flags = m[2];
        have_flags = true;
      }
    }
    auto number_after_colon = [&](std::string_view s) {
      size_t colon = s.find(':');
      return colon == std::string_view::npos
                 ? -1L
                 : std::strtol(std::string(s.substr(colon + 1)).c_str(), nullptr, 10);
    };
    if (family < 0 && line.rfind("cpu family", 0) == 0) family = number_after_colon(line);
    if (model < 0 && line.rfind("model", 0) == 0 && line.rfind("model name", 0) != 0)
      model = number_after_colon(line);
  }
  if (family == 6) {
    if (model == 106) c.arch_codename = "ICX";
    else if (model == 143) c.arch_codename = "SPR";
    else if (model == 207) c.arch_codename = "EMR";
    else if (model == 173) c.arch_codename = "GNR";
  }
  // get_hypervisor_vendor looks at the first flags/Features line only.
  std::istringstream flags(have_flags ? c.flags : "");
  for (std::string f; flags >> f;) c.hypervisor_flag |= f == "hypervisor";
  return c;
}

std::pair<std::string, std::string> parse_ldd_version(std::string_view text) {
  std::string s(text);
  std::smatch m;
  if (std::regex_search(s, m, std::regex(R"(GLIBC (.*?)\))"))) return {"glibc", m[1]};
  if (std::regex_search(s, m, std::regex(R"(\(GNU libc\) (.*?)\n)"))) return {"glibc", m[1]};
  if (std::regex_search(s, m, std::regex(R"(musl libc[^]*?\nVersion (.*?)\n)")))
    return {"musl", m[1]};
  return {"unknown", s};
}

json::Value static_metadata(int64_t spawn_time, const json::Value& run_arguments) {
  Value md = Value::object();
  md.set("cloud_provider", Value::from_string("unknown"));
  md.set("agent_version", Value::from_string(kGprofilerAgentVersion));
  md.set("gp_version", Value::from_string(kVersion));
  md.set("spawn_time", Value::from_string(iso(spawn_time)));
  md.set("python_version", Value::from_string("unknown"));
  std::string mode = run_mode();
  md.set("run_mode", Value::from_string(mode));
  md.set("deployment_type", Value::from_string(mode == "k8s"         ? "k8s"
                                               : mode == "container" ? "containers"
                                                                     : "instances"));
  utsname u{};
  ::uname(&u);
  md.set("kernel_release", Value::from_string(u.release));
  md.set("kernel_version", Value::from_string(u.version));
  md.set("system_name", Value::from_string(u.sysname));
  CpuInfo cpu = parse_cpuinfo(read_text("/proc/cpuinfo"));
  md.set("hypervisor", Value::from_string(hypervisor_vendor(cpu.hypervisor_flag)));
  long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  md.set("processors", Value::from_int(cpus > 0 ? cpus : 0));
  md.set("cpu_model_name", Value::from_string(cpu.model_name));
  md.set("cpu_arch_codename", Value::from_string(cpu.arch_codename));
  md.set("cpu_flags", Value::from_string(cpu.flags));
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  md.set("memory_capacity_mb", Value::from_int(static_cast<int64_t>(
                                   std::llround(double(pages) * double(page) / 1048576.0))));
  char host[256] = {0};
  md.set("hostname",
         Value::from_string(::gethostname(host, sizeof host - 1) == 0 ? host : "<unknown>"));
  md.set("system", Value::from_string(u.sysname));
  std::string osr = read_text("/etc/os-release");
  if (osr.empty()) osr = read_text("/usr/lib/os-release");
  OsRelease os = parse_os_release(osr);
  md.set("os_name", Value::from_string(os.name));
  md.set("os_release", Value::from_string(os.version));
  md.set("os_codename", Value::from_string(os.codename));
  auto [libc_type, libc_version] = parse_ldd_version(ldd_output());
  md.set("libc_type", Value::from_string(libc_type));
  md.set("libc_version", Value::from_string(libc_version));
  md.set("hardware_type", Value::from_string(u.machine));
  md.set("pid", Value::from_int(::getpid()));
  md.set("mac_address", Value::from_string(mac_address()));
  md.set("private_ip", Value::from_string(local_ip()));
  timespec boot{};
  ::clock_gettime(CLOCK_BOOTTIME, &boot);
  // gProfiler's quirk: spawn_uptime_ms holds seconds.
  md.set("spawn_uptime_ms", Value::from_double(double(boot.tv_sec) + double(boot.tv_nsec) / 1e9));
  md.set("run_arguments", run_arguments);
  md.set("big_data", Value::object());
  md.set("external_metadata", Value::object());
  json::remove_keys_containing(md, "token");
  return md;
}

Result<std::chrono::seconds> file_age(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error("cannot read '" + path + "': " + std::strerror(errno));
  auto modified = std::chrono::system_clock::from_time_t(st.st_mtime);
  auto age = std::chrono::system_clock::now() - modified;
  return std::max(std::chrono::seconds(0), std::chrono::duration_cast<std::chrono::seconds>(age));
}

std::optional<CpuTimes> parse_proc_stat(std::string_view text) {
  auto lines = lines_of(text);
  if (lines.empty() || lines[0].rfind("cpu ", 0) != 0) return std::nullopt;
  std::istringstream in{std::string(lines[0].substr(4))};
  std::vector<uint64_t> f;
  for (uint64_t v; in >> v;) f.push_back(v);
  if (f.size() < 4) return std::nullopt;
  f.resize(10, 0);  // user nice system idle iowait irq softirq steal guest guest_nice
  CpuTimes t;
  for (size_t i = 0; i < 8; ++i) t.total += f[i];
  t.busy = t.total - f[3] - f[4];
  return t;
}

double cpu_percent(const CpuTimes& before, const CpuTimes& after) {
  if (after.busy <= before.busy || after.total <= before.total) return 0.0;
  double busy = double(after.busy - before.busy), all = double(after.total - before.total);
  return round1(busy / all * 100.0);
}

std::optional<double> memory_percent(std::string_view meminfo) {
  std::optional<double> total, available;
  for (std::string_view line : lines_of(meminfo)) {
    auto value = [&](std::string_view key) -> std::optional<double> {
      if (line.rfind(key, 0) != 0) return std::nullopt;
      return std::strtod(std::string(line.substr(key.size())).c_str(), nullptr);
    };
    if (auto v = value("MemTotal:")) total = v;
    if (auto v = value("MemAvailable:")) available = v;
  }
  if (!total || !available || *total <= 0) return std::nullopt;
  return round1((*total - *available) / *total * 100.0);
}

MetricsMonitor::MetricsMonitor(std::chrono::milliseconds interval) : interval_(interval) {
  last_cpu_ = parse_proc_stat(read_text("/proc/stat"));
  thread_ = std::thread([this] { poll(); });
}

MetricsMonitor::~MetricsMonitor() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  thread_.join();
}

void MetricsMonitor::poll() {
  auto next = std::chrono::steady_clock::now();
  while (true) {
    if (auto m = memory_percent(read_text("/proc/meminfo"))) {
      std::lock_guard lock(mutex_);
      memory_.push_back(*m);
    }
    next += interval_;
    while (std::chrono::steady_clock::now() < next) {
      {
        std::lock_guard lock(mutex_);
        if (stop_) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

MetricsMonitor::Metrics MetricsMonitor::take() {
  Metrics out;
  auto now = parse_proc_stat(read_text("/proc/stat"));
  auto memory = memory_percent(read_text("/proc/meminfo"));
  std::lock_guard lock(mutex_);
  // A period shorter than the polling interval still gets one reading (gProfiler would send
  // null, which the Studio's indexer skips).
  if (memory_.empty() && memory) memory_.push_back(*memory);
  if (now && last_cpu_) out.cpu_avg = cpu_percent(*last_cpu_, *now);
  last_cpu_ = now;
  if (!memory_.empty()) {
    double sum = 0;
    for (double m : memory_) sum += m;
    out.mem_avg = sum / double(memory_.size());
    memory_.clear();
  }
  return out;
}

Status apply_agent_header(const std::string& path, const json::Value& agent,
                          const std::string& current_time, const MetricsMonitor::Metrics& metrics,
                          const HwMetrics* hw) {
  std::string text = read_text(path);
  if (text.rfind("# ", 0) != 0) return make_error("'" + path + "' has no .col header");
  size_t nl = text.find('\n');
  auto header =
      json::parse(std::string_view(text).substr(2, nl == std::string::npos ? nl : nl - 2));
  if (!header || !header->is_object()) return make_error("'" + path + "' has a malformed header");
  Value* md = header->find("metadata");
  if (md == nullptr || !md->is_object()) {
    header->set("metadata", Value::object());
    md = header->find("metadata");
  }
  for (const auto& [key, value] : agent.members) md->set(key, value);
  if (!current_time.empty()) md->set("current_time", Value::from_string(current_time));
  Value m = Value::object();
  m.set("cpu_avg", metrics.cpu_avg ? Value::from_double(*metrics.cpu_avg) : Value::null());
  m.set("mem_avg", metrics.mem_avg ? Value::from_double(*metrics.mem_avg) : Value::null());
  header->set("metrics", std::move(m));
  if (hw != nullptr) {
    header->set("hwmetrics", hw->data);
    header->set("htmlblob", hw->html);
  }
  std::string out = "# " + json::dump(*header);
  if (nl != std::string::npos) out += text.substr(nl);
  std::string tmp = path + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    o << out;
    if (!o.flush()) return make_error("cannot write '" + tmp + "'");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return make_error("cannot rename '" + tmp + "'");
  return ok_status();
}

}  // namespace gp::profile
