#pragma once
// ElfFile: one ELF file opened read-only through libelf, with the few facts symbolization needs
// (build-id, .gnu_debuglink, file offset → link-time address, sections). RAII owner of the fd and
// the Elf*; movable, not copyable. Not thread-safe: use one ElfFile per thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gp/util/result.h"

typedef struct Elf Elf;

namespace gp::symbolize {

struct Debuglink {
  std::string name;  // file name only, as in the section
  uint32_t crc = 0;  // CRC-32 (zlib's) of the whole debug file
};

class ElfFile {
 public:
  // Opens path and checks that it is an ELF file. The error text names what failed.
  static Result<ElfFile> open(const std::string& path);
  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  Elf* elf() const { return elf_; }
  const std::string& path() const { return path_; }
  // Releases the fd to the caller (libdwfl consumes it); the Elf* is closed.
  int release_fd();

  // GNU build-id note bytes, empty when the file has none.
  std::string build_id() const;
  std::optional<Debuglink> debuglink() const;
  // Link-time virtual address of a file offset, from the PT_LOAD that maps it (executable or
  // not). nullopt when no segment covers it. Separate debug files keep the program headers of
  // their binary, so this works on them too.
  std::optional<uint64_t> address_of_offset(uint64_t file_offset) const;
  bool has_section(std::string_view name) const;
  // True when the file carries DWARF line/function data (.debug_info, possibly compressed).
  bool has_dwarf() const { return has_section(".debug_info") || has_section(".zdebug_info"); }
  // Section contents (decompressed when SHF_COMPRESSED) and its address; nullopt when absent.
  struct Section {
    std::string_view data;
    uint64_t address = 0;
  };
  std::optional<Section> section(std::string_view name) const;

 private:
  ElfFile(int fd, Elf* elf, std::string path) : fd_(fd), elf_(elf), path_(std::move(path)) {}
  int fd_ = -1;
  Elf* elf_ = nullptr;
  std::string path_;
};

// Lower-case hex of raw bytes, as in `.build-id/xx/rest` paths.
std::string hex(std::string_view raw);
// `.build-id/ab/cdef...` relative path (no suffix) for a raw build-id; "" when it is too short.
std::string build_id_relpath(std::string_view raw_build_id);
// CRC-32 of a whole file, as .gnu_debuglink stores it; nullopt when unreadable.
std::optional<uint32_t> file_crc32(const std::string& path);

}  // namespace gp::symbolize
