#pragma once
// GNU build-id extraction from ELF files, memory images and raw note blobs.
//
// Input is untrusted (any file a sampled process maps, files from other hosts). It is read
// through elfutils' libelf, with pread (never a mapping: a file truncated under the reader is
// a short read, not a SIGBUS): libelf checks header counts and offsets against the file size,
// gelf_getnote checks every note's name and desc against its region, and note regions over
// 1 MiB are not read. A corrupt or truncated ELF gives an Error, never a crash, an over-read or
// memory out of proportion to the file. 32- and 64-bit ELF of either byte order are accepted,
// independent of the host's.
//
// Lookup order: PT_NOTE program headers (what the loader and the kernel see, present in stripped
// files too), then SHT_NOTE section headers (objects and files without program headers).
// Only notes named "GNU" of type NT_GNU_BUILD_ID (3) count.

#include <cstdint>
#include <string>
#include <string_view>

#include "gp/util/result.h"

namespace gp::elf {

// Build-id of the ELF file open on fd, as raw bytes (usually 20 for SHA-1, 16 for md5/uuid,
// any length for --build-id=0x...). Reads with pread, so the fd's offset is unchanged and the
// fd may be shared. Error when the file is not ELF, is corrupt, or has no build-id note.
Result<std::string> read_build_id(int fd);

// Same, opening path read-only (O_CLOEXEC). Symlinks in path are followed; callers that must not
// follow them open the file themselves and use the fd overload.
Result<std::string> read_build_id(const std::string& path);

// Build-id of an ELF image held in memory (a file's bytes, or a loaded image such as the vDSO
// whose file offsets equal its offsets from the load base).
Result<std::string> read_build_id_from_image(std::string_view image);

// Searches a raw sequence of ELF notes (the content of one PT_NOTE segment / SHT_NOTE section,
// or /sys/kernel/notes, which is in the host's byte order with 4-byte alignment) for the GNU
// build-id. `align` is the note alignment: 4, or 8 for 8-aligned PT_NOTE segments.
// Returns an empty string when the blob holds no build-id note (malformed notes end the scan).
std::string find_build_id_in_notes(std::string_view notes, bool big_endian, uint64_t align = 4);

// Lower-case hex of raw bytes ("" for ""), as in readelf -n and .build-id/xx/rest paths.
std::string build_id_hex(std::string_view raw);

}  // namespace gp::elf
