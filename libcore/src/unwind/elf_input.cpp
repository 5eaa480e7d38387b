// build_table on ELF files and images: libelf finds the CFI sections and the executable
// segments, table_builder.cpp does the rest.

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "gp/unwind/table.h"

namespace gp::unwind {
namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

std::string elf_error() { return elf_errmsg(-1) ? elf_errmsg(-1) : "unknown libelf error"; }

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

// The section's bytes (decompressed when SHF_COMPRESSED); empty when absent or unreadable.
CfiSection section_bytes(Elf_Scn* scn, const GElf_Shdr& shdr) {
  if (shdr.sh_type == SHT_NOBITS) return {};  // a debug file's placeholder
  if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) return {};
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || data->d_buf == nullptr) return {};
  return CfiSection{{static_cast<const uint8_t*>(data->d_buf), data->d_size}, shdr.sh_addr};
}

Status find_sections(Elf* elf, CfiInput& input) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return make_error("no section names: " + elf_error());
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr) continue;
    if (std::strcmp(name, ".eh_frame") == 0) {
      input.eh_frame = section_bytes(scn, shdr);
    } else if (std::strcmp(name, ".debug_frame") == 0) {
      input.debug_frame = section_bytes(scn, shdr);
    } else if (std::strcmp(name, ".got") == 0) {
      input.data_base = shdr.sh_addr;
    } else if (std::strcmp(name, ".text") == 0) {
      input.text_base = shdr.sh_addr;
    }
  }
  return ok_status();
}

void find_text(Elf* elf, CfiInput& input) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return;
  for (size_t i = 0; i < count && i < 4096; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
    if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) &&
        phdr.p_vaddr + phdr.p_memsz >= phdr.p_vaddr) {
      input.text_ranges.emplace_back(phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz);
    }
  }
}

// The CFI sections and executable ranges of an ELF file.
Result<CfiInput> read_input(Elf* elf) {
  if (elf == nullptr) return make_error("not readable as ELF: " + elf_error());
  if (elf_kind(elf) != ELF_K_ELF) return make_error("not an ELF file");
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return make_error("bad ELF header: " + elf_error());
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
      ehdr.e_machine != EM_X86_64) {
    return make_error("not an x86-64 ELF file (unwind tables are x86-64 only)");
  }
  CfiInput input;
  if (Status s = find_sections(elf, input); !s) return s.error();
  find_text(elf, input);
  return input;
}

ElfPtr open_fd(int fd) {
  init_libelf();
  return ElfPtr(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
}

// ELF_C_READ_MMAP semantics: libelf reads the image and copies what it must convert; it never
// writes to it (the vDSO is mapped read-only).
ElfPtr open_image(std::span<const uint8_t> image) {
  init_libelf();
  return ElfPtr(
      elf_memory(reinterpret_cast<char*>(const_cast<uint8_t*>(image.data())), image.size()));
}

template <typename Out>
Result<Out> build(Elf* elf, Result<Out> (*from_sections)(const CfiInput&)) {
  auto input = read_input(elf);
  if (!input) return input.error();
  return from_sections(*input);
}

}  // namespace

Result<Table> build_table(int fd) {
  return build<Table>(open_fd(fd).get(), build_table_from_sections);
}

Result<Table> build_table(std::span<const uint8_t> image) {
  return build<Table>(open_image(image).get(), build_table_from_sections);
}

Result<TableStats> survey_cfi(int fd) {
  const ElfPtr elf = open_fd(fd);
  auto input = read_input(elf.get());
  if (!input) return input.error();
  input->survey = true;
  auto table = build_table_from_sections(*input);
  if (!table) return table.error();
  return table->stats;
}

Result<PackedTable> build_packed(int fd) {
  return build<PackedTable>(open_fd(fd).get(), build_packed_from_sections);
}

Result<PackedTable> build_packed(std::span<const uint8_t> image) {
  return build<PackedTable>(open_image(image).get(), build_packed_from_sections);
}

}  // namespace gp::unwind
