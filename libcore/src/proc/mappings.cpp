// executable_mappings and BuildIdCache: what symbolizing a process's addresses elsewhere needs.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string_view>

#include "gp/elf/build_id.h"
#include "gp/proc/process.h"
#include "gp/proc/unique_fd.h"
#include "proc/proc_files.h"

namespace gp::proc {
namespace {

constexpr size_t kMaxMaps = 64u << 20;       // JVMs have tens of thousands of lines
constexpr uint64_t kMaxVdsoSize = 1u << 20;  // the vDSO is a few pages

struct MapsLine {
  uint64_t start = 0, end = 0, offset = 0, inode = 0;
  unsigned major = 0, minor = 0;
  bool executable = false;
  std::string_view path;
};

// Splits off the next space-delimited token of line.
std::string_view next_token(std::string_view& line) {
  const size_t begin = line.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(begin);
  const size_t end = std::min(line.find(' '), line.size());
  std::string_view tok = line.substr(0, end);
  line.remove_prefix(end);
  return tok;
}

// "start-end perms offset major:minor inode [path]"; the path is the rest of the line after the
// padding and may contain spaces.
bool parse_maps_line(std::string_view line, MapsLine& m) {
  const std::string_view range = next_token(line);
  const std::string_view perms = next_token(line);
  const std::string_view offset = next_token(line);
  const std::string_view dev = next_token(line);
  const std::string_view inode = next_token(line);
  const size_t dash = range.find('-');
  const size_t colon = dev.find(':');
  if (dash == std::string_view::npos || colon == std::string_view::npos || perms.size() < 3)
    return false;
  uint64_t major = 0, minor = 0;
  if (!parse_u64(range.substr(0, dash), m.start, 16) ||
      !parse_u64(range.substr(dash + 1), m.end, 16) || !parse_u64(offset, m.offset, 16) ||
      !parse_u64(dev.substr(0, colon), major, 16) || !parse_u64(dev.substr(colon + 1), minor, 16) ||
      !parse_u64(inode, m.inode)) {
    return false;
  }
  m.major = static_cast<unsigned>(major);
  m.minor = static_cast<unsigned>(minor);
  m.executable = perms[2] == 'x';
  const size_t path_at = line.find_first_not_of(' ');
  m.path = path_at == std::string_view::npos ? std::string_view() : line.substr(path_at);
  return true;
}

model::MappingKind kind_of(const MapsLine& m) {
  if (m.path == "[vdso]" || m.path == "[vsyscall]") return model::MappingKind::vdso;
  // "[anon:name]" (prctl PR_SET_VMA_ANON_NAME), "[stack]", "[heap]", "[uprobes]": no file behind.
  if (m.path.empty() || m.path.front() == '[') return model::MappingKind::anonymous;
  return model::MappingKind::user;
}

// The vDSO has no file; its image in the process's memory is a complete ELF.
std::string vdso_build_id(const std::string& dir, const MapsLine& m, BuildIdCache& cache) {
  if (m.path != "[vdso]" || m.end <= m.start || m.end - m.start > kMaxVdsoSize) return {};
  if (const std::string* known = cache.vdso(m.end - m.start)) return *known;
  UniqueFd fd(::open((dir + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return {};
  std::string image(m.end - m.start, '\0');
  const ssize_t got = ::pread(fd.get(), image.data(), image.size(), static_cast<off_t>(m.start));
  if (got <= 0) return {};
  image.resize(static_cast<size_t>(got));
  auto id = elf::read_build_id_from_image(image);
  if (!id) return {};
  cache.set_vdso(m.end - m.start, *id);
  return *id;
}

std::string file_build_id(const std::string& dir, const MapsLine& m, BuildIdCache& cache) {
  char range[64];
  std::snprintf(range, sizeof range, "/map_files/%llx-%llx",
                static_cast<unsigned long long>(m.start), static_cast<unsigned long long>(m.end));
  if (auto id = cache.get(dir + range)) return *id;
  // map_files needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE); the path through the process's
  // root works for unprivileged reads of one's own processes. A " (deleted)" file is gone there.
  // The inode must still be the mapped one: the path may now name a replaced file. (st_dev is
  // not compared: btrfs and overlayfs report other device numbers to stat than maps shows.)
  const std::string fallback = dir + "/root" + std::string(m.path);
  struct stat st {};
  if (m.path.front() == '/' && ::stat(fallback.c_str(), &st) == 0 && st.st_ino == m.inode) {
    if (auto id = cache.get(fallback)) return *id;
  }
  return {};
}

}  // namespace

const std::string* BuildIdCache::vdso(uint64_t size) const {
  auto it = vdso_.find(size);
  return it == vdso_.end() ? nullptr : &it->second;
}

std::string BuildIdCache::get(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  const Key key{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  if (auto it = entries_.find(key); it != entries_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  auto id = elf::read_build_id(fd);
  std::string value = id ? *id : std::string();
  entries_.emplace(key, value);
  return value;
}

std::optional<std::string> BuildIdCache::get(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const Key key{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  if (auto it = entries_.find(key); it != entries_.end()) {
    ++hits_;
    return it->second;
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return std::nullopt;
  return get(fd.get());
}

Result<std::vector<model::Mapping>> executable_mappings(int32_t pid, const SnapshotOptions& options,
                                                        BuildIdCache* cache) {
  std::string dir = options.proc_root + "/" + std::to_string(pid);
  int err = 0;
  auto maps = read_file(dir + "/maps", kMaxMaps, &err);
  if (!maps) {
    if (is_gone_errno(err)) return make_error("process " + std::to_string(pid) + " exited");
    return make_error("cannot read '" + dir + "/maps': " + maps.error().message);
  }
  if (maps->empty()) {
    // A zombie leader has no address space of its own; a live thread's files show it.
    const std::string mm_dir = memory_dir(dir, pid);
    if (mm_dir != dir) {
      dir = mm_dir;
      maps = read_file(dir + "/maps", kMaxMaps, &err);
      if (!maps) return make_error("cannot read '" + dir + "/maps': " + maps.error().message);
    }
  }
  BuildIdCache local;
  BuildIdCache& ids = cache ? *cache : local;
  std::vector<model::Mapping> out;
  for (const std::string& line : split(*maps, '\n')) {
    MapsLine m;
    if (!parse_maps_line(line, m) || !m.executable) continue;
    model::Mapping mapping;
    mapping.pid = pid;
    mapping.start = m.start;
    mapping.end = m.end;
    mapping.file_offset = m.offset;
    mapping.path = std::string(m.path);
    mapping.dev = makedev(m.major, m.minor);
    mapping.inode = m.inode;
    mapping.kind = kind_of(m);
    if (mapping.kind == model::MappingKind::user) mapping.build_id = file_build_id(dir, m, ids);
    if (mapping.kind == model::MappingKind::vdso) mapping.build_id = vdso_build_id(dir, m, ids);
    out.push_back(std::move(mapping));
  }
  return out;
}

bool loader_still_mapping(const std::vector<model::Mapping>& mappings) {
  bool loader = false;
  for (const model::Mapping& m : mappings) {
    if (m.kind != model::MappingKind::user) continue;
    std::string_view name(m.path);
    name.remove_prefix(std::min(name.size(), name.rfind('/') + 1));
    if (name.starts_with("ld-linux") || name.starts_with("ld-musl") || name.starts_with("ld.so")) {
      loader = true;
    } else if (name.starts_with("libc.so") || name.starts_with("libc-") ||
               name.starts_with("libc.musl")) {
      return false;
    }
  }
  return loader;
}

}  // namespace gp::proc
