// Per-application metadata for gp-runtime's Process entries (reference/gprofiler.md §7.2).
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "gp/elf/build_id.h"
#include "gp/runtime/appid.h"
#include "gp/runtime/subprocess.h"
#include "gp/util/json.h"
#include "root_path.h"

namespace gp::runtime {
namespace {

std::string proc_dir(const Target& t) { return t.root.substr(0, t.root.rfind('/')); }

// uname -m names of the ELF machines gp runs on.
std::string arch_of(const std::string& exe_link) {
  int fd = ::open(exe_link.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "error: " + std::string(std::strerror(errno));
  Elf64_Ehdr h{};
  ssize_t n = ::pread(fd, &h, sizeof h, 0);
  ::close(fd);
  if (n < static_cast<ssize_t>(EI_NIDENT + 4) || std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) {
    return "error: not an ELF file";
  }
  switch (h.e_machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_386:
      return "i686";
    case EM_ARM:
      return "armv7l";
    case EM_PPC64:
      return "ppc64le";
    case EM_S390:
      return "s390x";
    case EM_RISCV:
      return "riscv64";
    default:
      return "unknown(" + std::to_string(h.e_machine) + ")";
  }
}

// AT_EXECFN: the path execve was given, a string in the process's memory.
std::string execfn_of(const Target& t) {
  std::ifstream auxv(proc_dir(t) + "/auxv", std::ios::binary);
  uint64_t entry[2];
  uint64_t address = 0;
  while (auxv.read(reinterpret_cast<char*>(entry), sizeof entry)) {
    if (entry[0] == AT_EXECFN) address = entry[1];
    if (entry[0] == AT_NULL) break;
  }
  if (address == 0) return {};
  int fd = ::open((proc_dir(t) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[4096];
  ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(address));
  ::close(fd);
  if (n <= 0) return {};
  return std::string(buf, strnlen(buf, static_cast<size_t>(n)));
}

// `follow`: only for /proc/PID/exe, a kernel link to the very file the process runs; paths
// inside the process's root were resolved by hand and must not be followed again.
std::string elfid(const std::string& host_path, bool follow = false) {
  int fd = ::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return {};
  auto id = elf::read_build_id(fd);
  ::close(fd);
  return id ? "buildid:" + elf::build_id_hex(*id) : std::string();
}

bool same_mount_namespace(const Target& t) {
  struct stat mine {
  }, theirs{};
  return ::stat("/proc/self/ns/mnt", &mine) == 0 &&
         ::stat((proc_dir(t) + "/ns/mnt").c_str(), &theirs) == 0 && mine.st_ino == theirs.st_ino &&
         mine.st_dev == theirs.st_dev;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// `<exe> <flag>`: the runtime's version as gProfiler reads it. Only for processes in gp's own
// mount namespace (running a container's binary with the host's libraries would be wrong), in a
// cleared environment with a 5 s timeout.
std::string version_of(const Target& t, const char* flag, bool from_stderr) {
  if (t.exe.empty() || !same_mount_namespace(t)) return {};
  RunOptions o;
  o.argv = {t.exe, flag};
  o.timeout = std::chrono::seconds(5);
  o.max_output_bytes = 64 << 10;
  auto r = run_profiler(o);
  if (!r || r->timed_out) return {};
  return trim(from_stderr ? r->err : (r->out.empty() ? r->err : r->out));
}

void add_string(json::Value& v, const char* key, const std::string& s) {
  if (!s.empty()) v.set(key, json::Value::from_string(s));
}

std::string library_elfid(const Target& t, std::string_view marker) {
  for (const auto& lib : t.libraries) {
    if (lib.find(marker) != std::string::npos) {
      return elfid(appid_detail::host_path(lib.substr(0, lib.find(" (deleted)")), t.root));
    }
  }
  return {};
}

void add_runtime_fields(json::Value& v, const Target& t, bool run_version) {
  std::string exe_id = elfid(proc_dir(t) + "/exe", true);
  switch (t.runtime) {
    case Runtime::python:
      if (run_version) add_string(v, "python_version", version_of(t, "-V", false));
      add_string(v, "exe_elfid", exe_id);
      add_string(v, "libpython_elfid", library_elfid(t, "libpython"));
      break;
    case Runtime::java:
      if (run_version) add_string(v, "java_version", version_of(t, "-version", true));
      add_string(v, "libjvm_elfid", library_elfid(t, "libjvm"));
      break;
    case Runtime::ruby:
      if (run_version) add_string(v, "ruby_version", version_of(t, "--version", false));
      add_string(v, "exe_elfid", exe_id);
      add_string(v, "libruby_elfid", library_elfid(t, "libruby"));
      break;
    case Runtime::node:
      if (run_version) add_string(v, "node_version", version_of(t, "--version", false));
      break;
    case Runtime::php:
      // `-v` (php, php-fpm and php-cgi all know it): "PHP 8.2.36 (cli) (built: ...) (NTS)".
      if (run_version) {
        std::string version = version_of(t, "-v", false);
        add_string(v, "php_version", version.substr(0, version.find('\n')));
      }
      add_string(v, "exe_elfid", exe_id);
      add_string(v, "libphp_elfid", library_elfid(t, "libphp"));
      break;
    case Runtime::dotnet:
      break;
  }
}

}  // namespace

std::string app_metadata_json(const Target& t, bool run_version, const std::string& extra_json) {
  json::Value v = json::Value::object();
  v.set("exe", json::Value::from_string(t.exe));
  std::string execfn = execfn_of(t);
  v.set("execfn", execfn.empty() ? json::Value::null() : json::Value::from_string(execfn));
  v.set("arch", json::Value::from_string(arch_of(proc_dir(t) + "/exe")));
  add_runtime_fields(v, t, run_version);
  if (!extra_json.empty()) {
    auto extra = json::parse(extra_json);
    if (extra && extra->is_object()) {
      for (auto& [key, value] : extra->members) v.set(key, value);
    }
  }
  return json::dump(v);
}

std::string add_app_metadata(const std::string& base_json, const std::string& extra_json) {
  if (extra_json.empty()) return base_json;
  auto base = json::parse(base_json);
  auto extra = json::parse(extra_json);
  if (!base || !extra || !base->is_object() || !extra->is_object()) return base_json;
  for (auto& [key, value] : extra->members)
    if (base->find(key) == nullptr) base->set(key, value);
  return json::dump(*base);
}

}  // namespace gp::runtime
