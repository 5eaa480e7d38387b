#pragma once
// ELF notes through elfutils' libelf (private to libcore/src/elf): a note-bearing region of an
// open Elf is read with elf_getdata_rawchunk (which converts the note headers to host order)
// and walked with gelf_getnote (which checks every name and desc against the region).

#include <libelf.h>

#include <cstdint>
#include <string>

namespace gp::elf {

// Build-id notes are tiny; a larger note region is not worth reading (and may be hostile).
inline constexpr uint64_t kMaxNoteRegion = 1 << 20;

// The libelf library, initialised once; false if it cannot work with this ELF version.
bool libelf_ready();

// The GNU build-id in the notes at [offset, offset+size) of `elf`, whose alignment field says
// `align` (8: ELF_T_NHDR8 layout, anything else: 4). Empty when there is none, when the region
// is empty, larger than kMaxNoteRegion or beyond `file_size`, or when a malformed note ends
// the walk first.
std::string build_id_in_region(Elf* elf, uint64_t file_size, uint64_t offset, uint64_t size,
                               uint64_t align);

}  // namespace gp::elf
