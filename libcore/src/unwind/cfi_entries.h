#pragma once
// The CIEs and FDEs of one .eh_frame or .debug_frame section (DWARF 5 §6.4.1, LSB 5.0 .eh_frame):
// headers decoded, instructions left as byte ranges for cfa_program.h. Untrusted input: a
// malformed entry is skipped (counted), a malformed length ends the section.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gp/unwind/table.h"

namespace gp::unwind {

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_register = 16;
  uint8_t fde_encoding = 0;  // DW_EH_PE_* of FDE addresses ('R'); absptr by default
  uint8_t address_size = 8;  // .debug_frame v4 may say 4
  bool augmented = false;    // 'z': FDEs carry augmentation data
  bool signal = false;       // 'S': the FDEs are sigreturn trampolines
  bool usable = true;        // false: FDEs that use it are skipped
  const uint8_t* insns = nullptr;
  const uint8_t* insns_end = nullptr;
};

struct Fde {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive; start < end
  uint32_t cie = 0;  // index in CfiEntries::cies
  bool from_debug_frame = false;
  const uint8_t* insns = nullptr;
  const uint8_t* insns_end = nullptr;
};

struct CfiEntries {
  std::vector<Cie> cies;
  std::vector<Fde> fdes;
  uint64_t skipped = 0;  // FDEs dropped: bad CIE pointer, unusable CIE, bad header, empty range
  // Parsing stops (too_many) at this many FDEs: each gives at least one row, so a section with
  // more could not be compiled anyway, and its FDEs would take memory first.
  uint64_t max_fdes = ~uint64_t{0};
  bool too_many = false;
};

struct SectionContext {
  CfiSection section;
  bool is_eh_frame = true;
  uint64_t data_base = 0;
  uint64_t text_base = 0;
};

// Appends the section's FDEs to `out`, and the CIEs they use (parsed once each, when an FDE first
// refers to them; FDEs refer to them by index).
void parse_cfi_section(const SectionContext& ctx, CfiEntries& out);

}  // namespace gp::unwind
