// libFuzzer target for the build-id reader (gp/elf/build_id.h), which reads every file a sampled
// process maps and files from other hosts: any bytes, as an ELF image and as a raw note blob of
// either byte order and alignment, give a build-id or an Error, never a crash or an over-read.
//
//   scripts/fuzz.sh elf_notes_fuzz

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "gp/elf/build_id.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "elf_notes_fuzz: invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto id = gp::elf::read_build_id_from_image(bytes);
  if (id.ok() && id->empty()) fail("an empty build-id reported as found");
  if (!id.ok() && id.error().message.empty()) fail("error without a message");
  for (bool big : {false, true})
    for (uint64_t align : {4, 8}) {
      const std::string found = gp::elf::find_build_id_in_notes(bytes, big, align);
      if (found.size() > bytes.size()) fail("a build-id longer than its notes");
    }
  return 0;
}
