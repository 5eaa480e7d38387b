#pragma once
// GoPclntab: function names (and file:line) from a Go binary's .gopclntab, for binaries whose
// .symtab and DWARF were stripped (`go build -ldflags=-s`). Reads the Go 1.18+ layout
// (pcHeader magic 0xfffffff0 for 1.18/1.19, 0xfffffff1 for 1.20+), little-endian, 4- or
// 8-byte pointers. Older layouts are refused (parse() returns an Error).
//
// The table is untrusted: every offset is bounds-checked, so a corrupt section gives an Error or
// "no function", never an over-read. The object only views the bytes it was given: keep them
// alive (the ElfFile that owns the section) as long as the GoPclntab is used.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gp/util/result.h"

namespace gp::symbolize {

struct GoFunction {
  std::string name;    // e.g. "main.work", "runtime.goexit"
  uint64_t entry = 0;  // link-time address of the function's first instruction
  std::string file;    // source file of the pc ("" when unknown)
  int32_t line = 0;    // line of the pc, 0 when unknown
};

class GoPclntab {
 public:
  // section: .gopclntab bytes; text_start: the .text section's address, used when the header's
  // textStart is 0 (PIE binaries relocate it at load time).
  static Result<GoPclntab> parse(std::string_view section, uint64_t text_start);

  // The function containing the link-time address pc; nullopt when none.
  std::optional<GoFunction> lookup(uint64_t pc) const;
  uint64_t function_count() const { return nfunc_; }

 private:
  uint64_t word(size_t offset) const;  // pointer-sized field of the header
  uint32_t u32(size_t offset) const;   // 0 when out of range
  std::string c_string(size_t offset) const;
  // Decodes a pc-value table (pcfile, pcln) for pc; nullopt when out of range.
  std::optional<int32_t> pc_value(uint32_t table_offset, uint64_t entry, uint64_t pc) const;
  std::string file_name(uint32_t cu_offset, int32_t file_index) const;

  std::string_view data_;
  uint32_t ptr_size_ = 8;
  uint32_t quantum_ = 1;
  bool has_start_line_ = false;  // Go 1.20+ _func layout
  uint64_t nfunc_ = 0;
  uint64_t text_start_ = 0;
  uint64_t funcname_ = 0, cutab_ = 0, filetab_ = 0, pctab_ = 0, pcln_ = 0;
};

}  // namespace gp::symbolize
