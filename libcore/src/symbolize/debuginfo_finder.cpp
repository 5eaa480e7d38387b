#include "gp/symbolize/debuginfo_finder.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <limits.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>

#include "gp/symbolize/elf_file.h"

namespace gp::symbolize {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// libdebuginfod, loaded at the first --debuginfod lookup (as libdwfl itself does): linked into
// every tool, it and libcurl's thirty-odd libraries were loaded and relocated at each start,
// most of a short run's CPU time. All null when it cannot be loaded.
struct Debuginfod {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_executable) find_executable = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_end) end = nullptr;
};

const Debuginfod& debuginfod() {
  static Debuginfod lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = ::dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return;
    Debuginfod l;
    l.begin = reinterpret_cast<decltype(l.begin)>(::dlsym(h, "debuginfod_begin"));
    l.find_executable =
        reinterpret_cast<decltype(l.find_executable)>(::dlsym(h, "debuginfod_find_executable"));
    l.find_debuginfo =
        reinterpret_cast<decltype(l.find_debuginfo)>(::dlsym(h, "debuginfod_find_debuginfo"));
    l.end = reinterpret_cast<decltype(l.end)>(::dlsym(h, "debuginfod_end"));
    if (l.begin && l.find_executable && l.find_debuginfo && l.end) lib = l;
  });
  return lib;
}

enum class Check { match, mismatch, unusable };

// Whether the ELF file at path has the wanted build-id. An empty wanted id accepts any ELF. On a
// match, `file` (when given) holds the file, open.
Check check_build_id(const std::string& path, const std::string& build_id,
                     std::optional<ElfFile>* file = nullptr) {
  if (!is_regular_file(path)) return Check::unusable;
  auto f = ElfFile::open(path);
  if (!f) return Check::unusable;
  if (!build_id.empty() && f->build_id() != build_id) return Check::mismatch;
  if (file != nullptr) file->emplace(std::move(*f));
  return Check::match;
}

std::string dirname_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Candidates of one store for a build-id: the flat `.build-id/xx/rest[.debug]` layout and perf's
// buildid cache, where `.build-id/xx/rest` is a directory holding `elf` and `debug`.
std::vector<std::string> store_candidates(const std::string& dir, const std::string& build_id,
                                          bool debug) {
  std::string rel = build_id_relpath(build_id);
  if (rel.empty()) return {};
  std::string base = dir + "/" + rel;
  if (debug) return {base + ".debug", base + "/debug"};
  return {base, base + "/elf"};
}

// The size of this process's [vDSO] mapping at `base`, from /proc/self/maps; 0 when not found.
size_t own_vdso_size(uintptr_t base) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() < 6 || line.compare(line.size() - 6, 6, "[vdso]") != 0) continue;
    uintptr_t start = std::strtoull(line.c_str(), nullptr, 16);
    uintptr_t end = std::strtoull(line.c_str() + line.find('-') + 1, nullptr, 16);
    return start == base && end > start ? end - start : 0;
  }
  return 0;
}

// This machine's own vDSO image, copied once into a memfd and named by a path any ELF reader can
// open ("/proc/self/fd/N"), so a recorded [vdso] with the same build-id (the same kernel build)
// is symbolized like a file. "" when there is none.
const std::string& own_vdso_path() {
  static const std::string path = [] {
    uintptr_t base = getauxval(AT_SYSINFO_EHDR);
    size_t size = base ? own_vdso_size(base) : 0;
    int fd = size ? memfd_create("gp-vdso", MFD_CLOEXEC) : -1;
    if (fd < 0) return std::string();
    if (write(fd, reinterpret_cast<const void*>(base), size) != static_cast<ssize_t>(size)) {
      close(fd);
      return std::string();
    }
    return "/proc/self/fd/" + std::to_string(fd);  // kept open for the whole run
  }();
  return path;
}

}  // namespace

bool debuginfod_available() { return debuginfod().begin != nullptr; }

FoundFiles DebugInfoFinder::find(const std::string& path, const std::string& build_id) const {
  FoundFiles out;
  std::optional<ElfFile> binary;
  bool have_binary = find_binary(path, build_id, out, binary);
  bool binary_has_dwarf = have_binary && binary->has_dwarf();
  if (!binary_has_dwarf) {
    bool have_debug = find_debug(build_id, out) || (have_binary && find_debuglink(*binary, out));
    if (!have_debug && opt_.debuginfod && !build_id.empty()) find_debuginfod(build_id, out);
  }
  if (have_binary) out.opened = std::make_shared<ElfFile>(std::move(*binary));
  if (out.binary.empty() && !out.debug.empty()) {
    // A debug file alone still has program headers and the full symbol table.
    out.binary = out.debug;
    out.binary_source = out.debug_source;
    out.debug.clear();
    out.debug_source.clear();
  }
  if (!out.binary.empty()) out.status = FindStatus::found;
  else if (!out.mismatched.empty()) out.status = FindStatus::build_id_mismatch;
  return out;
}

std::vector<std::pair<std::string, const char*>> DebugInfoFinder::stores() const {
  std::vector<std::pair<std::string, const char*>> out;
  for (const auto& dir : opt_.debug_dirs) out.emplace_back(dir, "debug-dir");
  if (!opt_.sidecar.empty()) out.emplace_back(opt_.sidecar, "sidecar");
  return out;
}

bool DebugInfoFinder::find_binary(const std::string& path, const std::string& build_id,
                                  FoundFiles& out, std::optional<ElfFile>& binary) const {
  auto take = [&](const std::string& candidate, const char* source) {
    Check c = check_build_id(candidate, build_id, &binary);
    if (c == Check::mismatch && out.mismatched.empty()) out.mismatched = candidate;
    if (c != Check::match) return false;
    out.binary = candidate;
    out.binary_source = source;
    return true;
  };
  if (!build_id.empty()) {
    for (const auto& [dir, source] : stores())
      for (const auto& c : store_candidates(dir, build_id, false))
        if (take(c, source)) return true;
  }
  bool absolute = !path.empty() && path[0] == '/';
  if (absolute && !opt_.sysroot.empty() && take(opt_.sysroot + path, "sysroot")) return true;
  if (absolute && opt_.use_recorded_path && take(path, "path")) return true;
  if (path == "[vdso]" && opt_.use_recorded_path && !build_id.empty() &&
      take(own_vdso_path(), "vdso"))
    return true;
  return false;
}

bool DebugInfoFinder::find_debug(const std::string& build_id, FoundFiles& out) const {
  if (build_id.empty()) return false;
  auto take = [&](const std::string& candidate, const char* source) {
    Check c = check_build_id(candidate, build_id);
    if (c == Check::mismatch && out.mismatched.empty()) out.mismatched = candidate;
    if (c != Check::match) return false;
    out.debug = candidate;
    out.debug_source = source;
    return true;
  };
  for (const auto& [dir, source] : stores())
    for (const auto& c : store_candidates(dir, build_id, true))
      if (take(c, source)) return true;
  std::string rel = build_id_relpath(build_id) + ".debug";
  if (!opt_.sysroot.empty() && take(opt_.sysroot + "/usr/lib/debug/" + rel, "sysroot")) return true;
  if (!opt_.system_debug_root.empty() && take(opt_.system_debug_root + "/" + rel, "system"))
    return true;
  return false;
}

bool DebugInfoFinder::find_debuglink(const ElfFile& file, FoundFiles& out) const {
  const std::string& binary = file.path();
  auto link = file.debuglink();
  if (!link) return false;
  std::string dir = dirname_of(binary);
  std::vector<std::string> candidates = {dir + "/" + link->name, dir + "/.debug/" + link->name};
  if (!opt_.system_debug_root.empty())
    candidates.push_back(opt_.system_debug_root + (dir == "/" ? "" : dir) + "/" + link->name);
  char self[PATH_MAX];
  std::string self_real = ::realpath(binary.c_str(), self) ? self : binary;
  for (const auto& c : candidates) {
    char buf[PATH_MAX];
    if (!is_regular_file(c) || ::realpath(c.c_str(), buf) == nullptr || self_real == buf) continue;
    auto crc = file_crc32(c);
    if (!crc || *crc != link->crc) {
      if (out.mismatched.empty()) out.mismatched = c;
      continue;
    }
    out.debug = c;
    out.debug_source = "debuglink";
    return true;
  }
  return false;
}

void DebugInfoFinder::find_debuginfod(const std::string& build_id, FoundFiles& out) const {
  // One client per call: clients are not thread-safe, and the cache makes repeats cheap.
  const Debuginfod& lib = debuginfod();
  if (lib.begin == nullptr) return;
  debuginfod_client* client = lib.begin();
  if (client == nullptr) return;
  auto bits = reinterpret_cast<const unsigned char*>(build_id.data());
  int len = static_cast<int>(build_id.size());
  char* found = nullptr;
  if (out.binary.empty()) {
    int fd = lib.find_executable(client, bits, len, &found);
    if (fd >= 0) {
      ::close(fd);
      out.binary = found;
      out.binary_source = "debuginfod";
    }
    std::free(found);
    found = nullptr;
  }
  int fd = lib.find_debuginfo(client, bits, len, &found);
  if (fd >= 0) {
    ::close(fd);
    out.debug = found;
    out.debug_source = "debuginfod";
  }
  std::free(found);
  lib.end(client);
}

}  // namespace gp::symbolize
