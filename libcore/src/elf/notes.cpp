// ELF note walking through libelf, shared by ELF files and raw note blobs (/sys/kernel/notes).

#include "elf/notes.h"

#include <elf.h>
#include <gelf.h>

#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "gp/elf/build_id.h"

namespace gp::elf {

bool libelf_ready() {
  static std::once_flag once;
  static bool ready = false;
  std::call_once(once, [] { ready = elf_version(EV_CURRENT) != EV_NONE; });
  return ready;
}

std::string build_id_in_region(Elf* elf, uint64_t file_size, uint64_t offset, uint64_t size,
                               uint64_t align) {
  if (size == 0 || size > kMaxNoteRegion || offset > file_size || size > file_size - offset) {
    return {};
  }
  // The gABI says 4 (or 8 for notes that use it, e.g. .note.gnu.property); anything else in a
  // p_align/sh_addralign field is junk and read as 4, as binutils does.
  Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(offset), size,
                                        align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
  if (data == nullptr || data->d_buf == nullptr) return {};
  const auto* bytes = static_cast<const char*>(data->d_buf);
  size_t pos = 0;
  while (pos < data->d_size) {
    GElf_Nhdr note;
    size_t name_off = 0;
    size_t desc_off = 0;
    const size_t next = gelf_getnote(data, pos, &note, &name_off, &desc_off);
    if (next == 0 || next <= pos) break;  // malformed: the walk ends
    const std::string_view name(bytes + name_off, note.n_namesz);
    if (note.n_type == NT_GNU_BUILD_ID && note.n_descsz > 0 &&
        (name == std::string_view("GNU\0", 4) || name == "GNU")) {
      return std::string(bytes + desc_off, note.n_descsz);
    }
    pos = next;
  }
  return {};
}

std::string find_build_id_in_notes(std::string_view notes, bool big_endian, uint64_t align) {
  if (!libelf_ready() || notes.empty() || notes.size() > kMaxNoteRegion) return {};
  // libelf walks notes of an Elf: the blob goes behind a bare ELF header that only names its
  // byte order, and is read as a region of that image.
  constexpr size_t kHeader = sizeof(Elf64_Ehdr);
  std::string image(kHeader, '\0');
  std::memcpy(image.data(), ELFMAG, SELFMAG);
  image[EI_CLASS] = ELFCLASS64;
  image[EI_DATA] = big_endian ? ELFDATA2MSB : ELFDATA2LSB;
  image[EI_VERSION] = EV_CURRENT;
  image.append(notes);
  Elf* elf = elf_memory(image.data(), image.size());
  if (elf == nullptr) return {};
  std::string id = build_id_in_region(elf, image.size(), kHeader, notes.size(), align);
  elf_end(elf);
  return id;
}

std::string build_id_hex(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

}  // namespace gp::elf
