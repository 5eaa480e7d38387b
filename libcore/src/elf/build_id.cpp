// GNU build-id from ELF headers through elfutils' libelf: PT_NOTE segments first, SHT_NOTE
// sections as the fallback, notes walked with gelf_getnote (elf/notes.h).

#include "gp/elf/build_id.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "elf/notes.h"
#include "gp/proc/unique_fd.h"

namespace gp::elf {
namespace {

// Upper bound on header tables we walk, whatever the file claims.
constexpr uint64_t kMaxEntries = 1 << 16;

class ElfHandle {
 public:
  explicit ElfHandle(Elf* elf) : elf_(elf) {}
  ~ElfHandle() {
    if (elf_ != nullptr) elf_end(elf_);
  }
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  Elf* get() const { return elf_; }

 private:
  Elf* elf_;
};

// A note-bearing region: offset, size and alignment within the file.
struct NoteRegion {
  uint64_t offset = 0, size = 0, align = 4;
};

bool is_elf_magic(const char* p, size_t n) {
  return n >= SELFMAG && std::memcmp(p, ELFMAG, SELFMAG) == 0;
}

Result<GElf_Ehdr> header_of(Elf* elf) {
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) return make_error("not an ELF file");
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) {
    return make_error(std::string("corrupt ELF file (") + elf_errmsg(-1) + ")");
  }
  return ehdr;
}

std::vector<NoteRegion> note_segments(Elf* elf) {
  std::vector<NoteRegion> out;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0 || phnum > kMaxEntries) return out;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) break;
    if (phdr.p_type == PT_NOTE) out.push_back({phdr.p_offset, phdr.p_filesz, phdr.p_align});
  }
  return out;
}

std::vector<NoteRegion> note_sections(Elf* elf) {
  std::vector<NoteRegion> out;
  size_t shnum = 0;
  if (elf_getshdrnum(elf, &shnum) != 0 || shnum > kMaxEntries) return out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) break;
    if (shdr.sh_type == SHT_NOTE) out.push_back({shdr.sh_offset, shdr.sh_size, shdr.sh_addralign});
  }
  return out;
}

std::string scan_regions(Elf* elf, uint64_t file_size, const std::vector<NoteRegion>& regions) {
  for (const NoteRegion& r : regions) {
    // A region outside the file is skipped: another one may be fine.
    std::string id = build_id_in_region(elf, file_size, r.offset, r.size, r.align);
    if (!id.empty()) return id;
  }
  return {};
}

Result<std::string> read_from(Elf* elf, uint64_t file_size) {
  auto ehdr = header_of(elf);
  if (!ehdr) return ehdr.error();
  std::string id = scan_regions(elf, file_size, note_segments(elf));
  if (id.empty()) id = scan_regions(elf, file_size, note_sections(elf));
  if (id.empty()) return make_error("no GNU build-id note");
  return id;
}

}  // namespace

Result<std::string> read_build_id(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error("not a regular file");
  if (!libelf_ready()) return make_error("libelf cannot be initialised");
  const auto size = static_cast<uint64_t>(st.st_size);
  // ELF_C_READ reads through pread: a file truncated under us is a short read, not the SIGBUS
  // a mapping would raise. libelf checks the header's counts and offsets against the file's
  // size (fstat), so a 248-byte file claiming a million section headers costs nothing.
  ElfHandle elf(elf_begin(fd, ELF_C_READ, nullptr));
  return read_from(elf.get(), size);
}

Result<std::string> read_build_id(const std::string& path) {
  proc::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return make_error(std::string(std::strerror(errno)));
  return read_build_id(fd.get());
}

Result<std::string> read_build_id_from_image(std::string_view image) {
  if (!libelf_ready()) return make_error("libelf cannot be initialised");
  if (!is_elf_magic(image.data(), image.size())) return make_error("not an ELF file");
  // libelf checks a memory image's counts and offsets against its size. It takes a writable
  // image; the caller's bytes are read-only, so it gets a copy.
  std::string copy(image);
  ElfHandle elf(elf_memory(copy.data(), copy.size()));
  return read_from(elf.get(), copy.size());
}

}  // namespace gp::elf
