// ELF note scanning shared by file parsing and /sys/kernel/notes.

#include <cstdint>
#include <string>
#include <string_view>

#include "elf/byte_order.h"
#include "gp/elf/build_id.h"

namespace gp::elf {
namespace {

constexpr uint32_t kNtGnuBuildId = 3;
constexpr size_t kNoteHeaderSize = 12;

uint64_t align_up(uint64_t value, uint64_t align) { return (value + align - 1) / align * align; }

}  // namespace

std::string find_build_id_in_notes(std::string_view notes, bool big_endian, uint64_t align) {
  // The gABI says 4 (or 8 for 64-bit objects that use it, e.g. .note.gnu.property); anything else
  // in a p_align/sh_addralign field is junk and treated as 4, as binutils does.
  if (align != 8) align = 4;
  const ByteOrder order{big_endian};
  uint64_t pos = 0;
  while (pos + kNoteHeaderSize <= notes.size()) {
    const uint32_t namesz = order.u32(notes.data() + pos);
    const uint32_t descsz = order.u32(notes.data() + pos + 4);
    const uint32_t type = order.u32(notes.data() + pos + 8);
    const uint64_t name_off = pos + kNoteHeaderSize;
    const uint64_t desc_off = align_up(name_off + namesz, align);
    const uint64_t next = align_up(desc_off + descsz, align);
    // 64-bit arithmetic on 32-bit sizes cannot wrap; one range check covers name and desc.
    if (desc_off + descsz > notes.size()) break;
    const std::string_view name = notes.substr(name_off, namesz);
    if (type == kNtGnuBuildId && (name == std::string_view("GNU\0", 4) || name == "GNU") &&
        descsz > 0) {
      return std::string(notes.substr(desc_off, descsz));
    }
    if (next <= pos) break;
    pos = next;
  }
  return {};
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
