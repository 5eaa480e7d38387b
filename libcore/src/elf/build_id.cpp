// GNU build-id from ELF headers: PT_NOTE segments first, SHT_NOTE sections as the fallback.
// Every value read from the file is checked against the file size before it is used.

#include "gp/elf/build_id.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "elf/byte_order.h"
#include "proc/unique_fd.h"

namespace gp::elf {
namespace {

constexpr uint32_t kPtNote = 4;
constexpr uint32_t kShtNote = 7;
constexpr uint16_t kPnXnum = 0xffff;
// Build-id notes are tiny; a larger note blob is not worth reading (and may be hostile).
constexpr uint64_t kMaxNoteBlob = 1 << 20;
// Upper bound on header tables we walk, whatever the file claims.
constexpr uint64_t kMaxEntries = 1 << 16;

// Random access to the bytes of an ELF file or memory image.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly n bytes at off; false when out of range or on I/O error.
  virtual bool read(uint64_t off, char* out, uint64_t n) const = 0;

  std::optional<std::string> read_string(uint64_t off, uint64_t n) const {
    if (off > size() || n > size() - off) return std::nullopt;
    std::string buf(n, '\0');
    if (!read(off, buf.data(), n)) return std::nullopt;
    return buf;
  }
};

class FdSource : public ByteSource {
 public:
  FdSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const override { return size_; }
  bool read(uint64_t off, char* out, uint64_t n) const override {
    if (off > size_ || n > size_ - off) return false;
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(off));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      out += got;
      off += static_cast<uint64_t>(got);
      n -= static_cast<uint64_t>(got);
    }
    return true;
  }

 private:
  int fd_;
  uint64_t size_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read(uint64_t off, char* out, uint64_t n) const override {
    if (off > bytes_.size() || n > bytes_.size() - off) return false;
    std::memcpy(out, bytes_.data() + off, n);
    return true;
  }

 private:
  std::string_view bytes_;
};

// The header fields the note search needs, decoded for either class and byte order.
struct ElfLayout {
  bool is64 = false;
  ByteOrder order;
  uint64_t phoff = 0, shoff = 0;
  uint64_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
};

// A note-bearing region: offset, size and alignment within the file.
struct NoteRegion {
  uint64_t offset = 0, size = 0, align = 4;
};

Result<ElfLayout> read_layout(const ByteSource& src) {
  char h[64] = {};
  if (src.size() < 52 || !src.read(0, h, 52)) return make_error("not an ELF file (too short)");
  if (std::memcmp(h,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return make_error("not an ELF file (bad magic)");
  ElfLayout l;
  if (h[4] != 1 && h[4] != 2) return make_error("corrupt ELF file (unknown class)");
  if (h[5] != 1 && h[5] != 2) return make_error("corrupt ELF file (unknown byte order)");
  l.is64 = h[4] == 2;
  l.order.big_endian = h[5] == 2;
  if (l.is64) {
    if (src.size() < 64 || !src.read(0, h, 64))
      return make_error("corrupt ELF file (truncated header)");
    l.phoff = l.order.u64(h + 32);
    l.shoff = l.order.u64(h + 40);
    l.phentsize = l.order.u16(h + 54);
    l.phnum = l.order.u16(h + 56);
    l.shentsize = l.order.u16(h + 58);
    l.shnum = l.order.u16(h + 60);
  } else {
    l.phoff = l.order.u32(h + 28);
    l.shoff = l.order.u32(h + 32);
    l.phentsize = l.order.u16(h + 42);
    l.phnum = l.order.u16(h + 44);
    l.shentsize = l.order.u16(h + 46);
    l.shnum = l.order.u16(h + 48);
  }
  return l;
}

// Section header 0 carries the real counts when they overflow 16 bits (gABI extended numbering).
void apply_extended_numbering(const ByteSource& src, ElfLayout& l) {
  const bool need_ph = l.phnum == kPnXnum;
  const bool need_sh = l.shnum == 0 && l.shoff != 0;
  if (!need_ph && !need_sh) return;
  const uint64_t want = l.is64 ? 64 : 40;
  char s[64];
  if (l.shoff == 0 || l.shentsize < want || !src.read(l.shoff, s, want)) {
    if (need_ph) l.phnum = 0;
    return;
  }
  if (need_sh) l.shnum = l.is64 ? l.order.u64(s + 32) : l.order.u32(s + 20);
  if (need_ph) l.phnum = l.order.u32(s + (l.is64 ? 44 : 28));
}

std::vector<NoteRegion> note_segments(const ByteSource& src, const ElfLayout& l) {
  std::vector<NoteRegion> out;
  const uint64_t want = l.is64 ? 56 : 32;
  if (l.phoff == 0 || l.phentsize < want || l.phnum > kMaxEntries) return out;
  auto table = src.read_string(l.phoff, l.phnum * l.phentsize);
  if (!table) return out;
  for (uint64_t i = 0; i < l.phnum; ++i) {
    const char* p = table->data() + i * l.phentsize;
    if (l.order.u32(p) != kPtNote) continue;
    NoteRegion r;
    r.offset = l.is64 ? l.order.u64(p + 8) : l.order.u32(p + 4);
    r.size = l.is64 ? l.order.u64(p + 32) : l.order.u32(p + 16);
    r.align = l.is64 ? l.order.u64(p + 48) : l.order.u32(p + 28);
    out.push_back(r);
  }
  return out;
}

std::vector<NoteRegion> note_sections(const ByteSource& src, const ElfLayout& l) {
  std::vector<NoteRegion> out;
  const uint64_t want = l.is64 ? 64 : 40;
  if (l.shoff == 0 || l.shentsize < want || l.shnum > kMaxEntries) return out;
  auto table = src.read_string(l.shoff, l.shnum * l.shentsize);
  if (!table) return out;
  for (uint64_t i = 0; i < l.shnum; ++i) {
    const char* s = table->data() + i * l.shentsize;
    if (l.order.u32(s + 4) != kShtNote) continue;
    NoteRegion r;
    r.offset = l.is64 ? l.order.u64(s + 24) : l.order.u32(s + 16);
    r.size = l.is64 ? l.order.u64(s + 32) : l.order.u32(s + 20);
    r.align = l.is64 ? l.order.u64(s + 48) : l.order.u32(s + 32);
    out.push_back(r);
  }
  return out;
}

std::string scan_regions(const ByteSource& src, const ElfLayout& l,
                         const std::vector<NoteRegion>& regions) {
  for (const NoteRegion& r : regions) {
    if (r.size == 0 || r.size > kMaxNoteBlob) continue;
    auto blob = src.read_string(r.offset, r.size);
    if (!blob) continue;  // points outside the file: skip, another region may be fine
    std::string id = find_build_id_in_notes(*blob, l.order.big_endian, r.align);
    if (!id.empty()) return id;
  }
  return {};
}

Result<std::string> read_from(const ByteSource& src) {
  auto layout = read_layout(src);
  if (!layout) return layout.error();
  apply_extended_numbering(src, *layout);
  std::string id = scan_regions(src, *layout, note_segments(src, *layout));
  if (id.empty()) id = scan_regions(src, *layout, note_sections(src, *layout));
  if (id.empty()) return make_error("no GNU build-id note");
  return id;
}

}  // namespace

Result<std::string> read_build_id(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error("not a regular file");
  return read_from(FdSource(fd, static_cast<uint64_t>(st.st_size)));
}

Result<std::string> read_build_id(const std::string& path) {
  proc::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return make_error(std::string(std::strerror(errno)));
  return read_build_id(fd.get());
}

Result<std::string> read_build_id_from_image(std::string_view image) {
  return read_from(MemorySource(image));
}

}  // namespace gp::elf
