// The uploading host's facts (uname, /proc/meminfo, /etc/os-release, first NIC's MAC and IPv4).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "gp/upload/studio.h"

namespace gp::upload {
namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string os_field(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == '=') {
      std::string v = line.substr(key.size() + 1);
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return {};
}

void network_facts(HostFacts& f) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    if (a->ifa_addr->sa_family == AF_INET && f.private_ip == "127.0.0.1") {
      char buf[INET_ADDRSTRLEN];
      auto* sin = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
      if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) != nullptr) f.private_ip = buf;
      std::string mac =
          read_text(("/sys/class/net/" + std::string(a->ifa_name) + "/address").c_str());
      while (!mac.empty() && (mac.back() == '\n' || mac.back() == ' ')) mac.pop_back();
      if (mac.size() == 17) f.mac_address = mac;
    }
  }
  freeifaddrs(list);
}

}  // namespace

HostFacts collect_host_facts() {
  HostFacts f;
  utsname u{};
  if (uname(&u) == 0) {
    f.hostname = u.nodename;
    f.kernel_release = u.release;
    f.kernel_version = u.version;
    f.machine = u.machine;
  }
  std::string osr = read_text("/etc/os-release");
  if (std::string n = os_field(osr, "NAME"); !n.empty()) f.os_name = n;
  if (std::string v = os_field(osr, "VERSION_ID"); !v.empty()) f.os_release = v;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0) f.processors = cpus;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    f.memory_capacity_mb = std::max<int64_t>(1, int64_t{pages} * page / (1 << 20));
  f.pid = getpid();
  f.now = static_cast<int64_t>(std::time(nullptr));
  network_facts(f);
  return f;
}

}  // namespace gp::upload
