#include "gp/unwind/process_tables.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "gp/elf/build_id.h"

namespace gp::unwind {
namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

Result<std::vector<Segment>> load_segments(Elf* elf) {
  if (elf == nullptr) return make_error(std::string("not an ELF file: ") + elf_errmsg(-1));
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0)
    return make_error(std::string("no program headers: ") + elf_errmsg(-1));
  std::vector<Segment> segments;
  for (size_t i = 0; i < n && i < 4096; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
    segments.push_back(Segment{ph.p_offset, ph.p_vaddr, ph.p_filesz});
  }
  if (segments.empty()) return make_error("no loadable segment");
  return segments;
}

Result<LoadedBinary> finish(Result<PackedTable> packed, Result<std::vector<Segment>> segments) {
  if (!packed) return packed.error();
  if (!segments) return segments.error();
  if (packed->rows.empty()) return make_error("no call-frame information");
  return LoadedBinary{std::move(*packed), std::move(*segments)};
}

}  // namespace

bool mapping_bias(const std::vector<Segment>& segments, uint64_t table_base, uint64_t start,
                  uint64_t file_offset, uint64_t* bias) {
  // The segment holding the mapping's first byte. Mappings start page-aligned and segments may
  // not: the page that holds a segment's start maps to the same place.
  for (const Segment& s : segments) {
    uint64_t first = s.offset & ~uint64_t{4095};
    if (file_offset < first || file_offset >= s.offset + std::max<uint64_t>(s.filesz, 1)) continue;
    // address a has file offset a - start + file_offset, virtual address
    // s.vaddr + (that - s.offset), table offset (that vaddr) - table_base.
    *bias = start - file_offset + s.offset - s.vaddr + table_base;
    return true;
  }
  return false;
}

Result<LoadedBinary> load_binary(int fd) {
  elf_version(EV_CURRENT);
  ElfPtr elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  return finish(build_packed(fd), load_segments(elf.get()));
}

Result<LoadedBinary> load_binary(std::span<const uint8_t> image) {
  elf_version(EV_CURRENT);
  // libelf only reads an image given to elf_memory (ELF_C_READ_MMAP semantics).
  ElfPtr elf(elf_memory(reinterpret_cast<char*>(const_cast<uint8_t*>(image.data())), image.size()));
  return finish(build_packed(image), load_segments(elf.get()));
}

ProcessTables::~ProcessTables() {
  for (auto& [pid, entries] : processes_)
    for (const auto& e : entries) store_.release(e.slot);
}

std::string ProcessTables::key_of(const model::Mapping& m) {
  if (m.kind == model::MappingKind::vdso) return "vdso";
  if (!m.build_id.empty()) return "b:" + m.build_id;
  return "f:" + std::to_string(m.dev) + ":" + std::to_string(m.inode) + ":" + m.path;
}

Result<TableStore::Acquired> ProcessTables::acquire(int32_t pid, const model::Mapping& m) {
  bool unopened = false;
  const std::string key = key_of(m);
  auto got = store_.acquire(key, [&]() -> Result<LoadedBinary> {
    if (m.kind == model::MappingKind::vdso) {
      if (vdso_.empty()) return make_error("this process has no vDSO to read");
      return load_binary(vdso_);
    }
    int fd = open_(pid, m);
    if (fd < 0) {
      unopened = true;
      return make_error("cannot open '" + m.path + "': " + std::strerror(errno));
    }
    struct stat st;
    const bool cacheable = cache_ != nullptr && !m.build_id.empty() && ::fstat(fd, &st) == 0;
    if (cacheable) {
      if (auto hit = cache_->load(m.build_id, static_cast<uint64_t>(st.st_size))) {
        ::close(fd);
        return std::move(*hit);
      }
    }
    auto binary = load_binary(fd);
    ::close(fd);
    if (binary) {
      ++stats_.built;
      if (cacheable) cache_->store(m.build_id, static_cast<uint64_t>(st.st_size), *binary);
    }
    return binary;
  });
  if (!got && unopened) store_.forget_failure(key);  // this process is gone, not the binary's fault
  return got;
}

std::vector<MappingTable> ProcessTables::update(int32_t pid,
                                                const std::vector<model::Mapping>& mappings,
                                                bool* changed) {
  return *update_unless(pid, mappings, changed, nullptr);
}

std::optional<std::vector<MappingTable>> ProcessTables::update_unless(
    int32_t pid, const std::vector<model::Mapping>& mappings, bool* changed,
    const std::function<bool()>& stop) {
  std::vector<MappingTable> entries;
  for (const auto& m : mappings) {
    if (m.kind != model::MappingKind::user && m.kind != model::MappingKind::vdso) continue;
    if (m.kind == model::MappingKind::user && (m.path.empty() || m.path[0] != '/')) continue;
    if (entries.size() == kMaxMappings) {
      ++stats_.over_limit;
      continue;
    }
    if (stop && stop()) {
      for (const auto& e : entries) store_.release(e.slot);
      ++stats_.stopped;
      *changed = false;
      return std::nullopt;
    }
    auto got = acquire(pid, m);
    if (!got) {
      ++stats_.no_table;
      if (failures_.size() < 64) failures_.push_back("'" + m.path + "': " + got.error().message);
      continue;
    }
    MappingTable e{m.start, m.end, 0, got->slot, 0};
    if (!mapping_bias(got->info->segments, got->info->base, m.start, m.file_offset, &e.bias)) {
      store_.release(got->slot);
      ++stats_.no_table;
      continue;
    }
    entries.push_back(e);
    ++stats_.mappings;
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  // The new references are taken before the old ones go: a table both use is never evicted.
  auto [it, inserted] = processes_.try_emplace(pid);
  auto& old = it->second;
  *changed = inserted || old != entries;
  for (const auto& e : old) store_.release(e.slot);
  old = entries;
  return entries;
}

void ProcessTables::forget(int32_t pid) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  for (const auto& e : it->second) store_.release(e.slot);
  processes_.erase(it);
}

std::vector<std::string> ProcessTables::take_failures() { return std::exchange(failures_, {}); }

namespace {

// The mapped file by its path in our own mount namespace, when it is the very file (its inode,
// and its build-id when the mapping has one; st_dev is not compared: btrfs and overlayfs report
// other device numbers to stat than maps shows); else -1 with errno set. Non-blocking: the path
// may now name a FIFO.
int open_same_file(const model::Mapping& m) {
  if (m.path.empty() || m.path[0] != '/' || m.inode == 0) {
    errno = ENOENT;
    return -1;
  }
  int fd = ::open(m.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st {};
  bool same = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == m.inode;
  if (same && !m.build_id.empty()) {
    auto id = elf::read_build_id(fd);
    same = id && *id == m.build_id;
  }
  if (!same) {
    ::close(fd);
    errno = ENOENT;
    return -1;
  }
  return fd;
}

}  // namespace

int open_mapped_file(int32_t pid, const model::Mapping& m) {
  char path[96];
  std::snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
                static_cast<unsigned long long>(m.start), static_cast<unsigned long long>(m.end));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0 || m.path.empty()) return fd;
  std::string rooted = "/proc/" + std::to_string(pid) + "/root" + m.path;
  fd = ::open(rooted.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return fd;
  // The process has exited (its mappings were read before): its stack copies still wait for
  // the tables of its files, which most often are ours too.
  return open_same_file(m);
}

std::span<const uint8_t> own_vdso_image() {
  auto base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return {};
  // Its size is the [vdso] line of our own maps.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos) continue;
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &start, &end) == 2 && start == base && end > start)
      return {reinterpret_cast<const uint8_t*>(base), static_cast<size_t>(end - start)};
  }
  return {};
}

}  // namespace gp::unwind
