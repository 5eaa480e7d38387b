// host_info: the recording host's identity for the archive header.

#include <sys/utsname.h>
#include <unistd.h>

#include <bit>

#include "gp/elf/build_id.h"
#include "gp/proc/process.h"
#include "proc/proc_files.h"

namespace gp::proc {
namespace {

// PRETTY_NAME="Debian GNU/Linux 12 (bookworm)" -> Debian GNU/Linux 12 (bookworm)
std::string os_pretty_name() {
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto text = read_file(path, 64 * 1024);
    if (!text) continue;
    for (const std::string& line : split(*text, '\n')) {
      if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
      std::string value = line.substr(12);
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      return value;
    }
  }
  return {};
}

// /sys/kernel/notes is the kernel's raw .notes section in the host's byte order; its alignment
// has been 4 (and 8 on some builds), so both are tried.
std::string kernel_build_id() {
  auto notes = read_file("/sys/kernel/notes", 64 * 1024);
  if (!notes) return {};
  const bool big = std::endian::native == std::endian::big;
  std::string id = elf::find_build_id_in_notes(*notes, big, 4);
  if (id.empty()) id = elf::find_build_id_in_notes(*notes, big, 8);
  return id;
}

}  // namespace

model::HostInfo host_info() {
  model::HostInfo h;
  utsname u{};
  if (::uname(&u) == 0) {
    h.hostname = u.nodename;
    h.kernel_release = u.release;
    h.kernel_version = u.version;
    h.machine = u.machine;
  }
  if (auto boot = read_file("/proc/sys/kernel/random/boot_id", 256))
    h.boot_id = std::string(chomp(*boot));
  h.kernel_build_id = kernel_build_id();
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  h.cpu_count = cpus > 0 ? static_cast<uint32_t>(cpus) : 0;
  h.os_release = os_pretty_name();
  return h;
}

}  // namespace gp::proc
