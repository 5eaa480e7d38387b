#pragma once
// SymbolIndex: address → function symbol for one libdwfl module, sorted once and searched in
// O(log n). libdwfl's own dwfl_module_addrinfo scans the whole table on every call, which made
// large modules (libc with its debug file) dominate a run. Private to src/symbolize.
//
// Symbols are every STT_FUNC / STT_GNU_IFUNC entry libdwfl merged for the module (.symtab, else
// .dynsym, plus MiniDebugInfo). Where several share an address, perf's choose_best_symbol picks
// the name; a zero-sized symbol ends where the next one starts (perf's fixup_end).
// Names point into libdwfl's string tables: valid while the module's Dwfl lives.
// PLT stubs have no symbols; like perf, each x86-64 stub is named "<target>@plt" from .rela.plt,
// so a sample in a stub is not taken for the sizeless symbol before it (`_init`).

#include <elfutils/libdwfl.h>

#include <deque>
#include <string>
#include <vector>

namespace gp::symbolize {

class SymbolIndex {
 public:
  explicit SymbolIndex(Dwfl_Module* module);
  // The function containing addr (module address), or nullptr.
  const char* lookup(Dwarf_Addr addr) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Dwarf_Addr start;
    GElf_Xword size;
    unsigned char info;  // st_info: binding and type
    const char* name;
  };
  void add_plt_stubs(Dwfl_Module* module);

  std::vector<Entry> entries_;         // sorted by start, one per address
  std::deque<std::string> plt_names_;  // storage for synthesized "<symbol>@plt" names
};

}  // namespace gp::symbolize
