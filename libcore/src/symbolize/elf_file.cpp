#include "gp/symbolize/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gp::symbolize {

Result<ElfFile> ElfFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(std::strerror(errno));
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    ::close(fd);
    return make_error("not an ELF file");
  }
  return ElfFile(fd, elf, path);
}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : fd_(other.fd_), elf_(other.elf_), path_(std::move(other.path_)) {
  other.fd_ = -1;
  other.elf_ = nullptr;
}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    this->~ElfFile();
    fd_ = other.fd_;
    elf_ = other.elf_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
    other.elf_ = nullptr;
  }
  return *this;
}

ElfFile::~ElfFile() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

int ElfFile::release_fd() {
  if (elf_ != nullptr) elf_end(elf_);
  elf_ = nullptr;
  int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string ElfFile::build_id() const {
  const void* bits = nullptr;
  ssize_t n = dwelf_elf_gnu_build_id(elf_, &bits);
  if (n <= 0) return {};
  return std::string(static_cast<const char*>(bits), static_cast<size_t>(n));
}

std::optional<Debuglink> ElfFile::debuglink() const {
  GElf_Word crc = 0;
  const char* name = dwelf_elf_gnu_debuglink(elf_, &crc);
  if (name == nullptr || *name == '\0') return std::nullopt;
  return Debuglink{name, crc};
}

std::optional<uint64_t> ElfFile::address_of_offset(uint64_t file_offset) const {
  size_t count = 0;
  if (elf_getphdrnum(elf_, &count) != 0) return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
    // p_memsz, not p_filesz: debug files keep the headers but not the bytes.
    if (file_offset >= ph.p_offset && file_offset - ph.p_offset < ph.p_memsz)
      return ph.p_vaddr + (file_offset - ph.p_offset);
  }
  return std::nullopt;
}

namespace {
Elf_Scn* find_section(Elf* elf, std::string_view name, GElf_Shdr* out) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    const char* n = elf_strptr(elf, strndx, sh.sh_name);
    if (n != nullptr && name == n) {
      *out = sh;
      return scn;
    }
  }
  return nullptr;
}
}  // namespace

bool ElfFile::has_section(std::string_view name) const {
  GElf_Shdr sh;
  Elf_Scn* scn = find_section(elf_, name, &sh);
  return scn != nullptr && sh.sh_type != SHT_NOBITS;
}

std::optional<ElfFile::Section> ElfFile::section(std::string_view name) const {
  GElf_Shdr sh;
  Elf_Scn* scn = find_section(elf_, name, &sh);
  if (scn == nullptr || sh.sh_type == SHT_NOBITS) return std::nullopt;
  if ((sh.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0) return std::nullopt;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
  return Section{std::string_view(static_cast<const char*>(data->d_buf), data->d_size), sh.sh_addr};
}

std::string hex(std::string_view raw) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string build_id_relpath(std::string_view raw_build_id) {
  if (raw_build_id.size() < 2) return {};
  std::string h = hex(raw_build_id);
  return ".build-id/" + h.substr(0, 2) + "/" + h.substr(2);
}

std::optional<uint32_t> file_crc32(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<unsigned char> buf(1 << 16);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    crc = crc32(crc, buf.data(), static_cast<uInt>(n));
  }
  ::close(fd);
  return static_cast<uint32_t>(crc);
}

}  // namespace gp::symbolize
