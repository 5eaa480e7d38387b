#pragma once
// ScopeIndex: address → innermost DWARF function scope (subprogram, inlined subroutine, entry
// point) of one libdwfl module, with the chain of enclosing function scopes. Private to
// src/symbolize.
//
// Why: dwarf_getscopes walks the compile unit's DIE tree on every call, which made
// symbolization as slow as perf's (libc's debug file has thousands of DIEs per CU). Here each
// CU is walked once, on its first lookup, into a table of disjoint address segments, each
// naming the innermost scope that covers it; lookups are then a binary search. Scopes are found
// the way dwarf_getscopes finds them: through lexical blocks, namespaces, classes and imported
// (dwz) partial units; a nested range overrides its parent's where it lies. Where ranges overlap
// without nesting (compilers do emit that), dwarf_getscopes' answer depends on the DIE order, so
// such addresses are reported as ambiguous and the caller asks dwarf_getscopes itself.
// DIEs stay valid while the module's Dwfl lives. Not thread-safe (one per resolver).

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace gp::symbolize {

class ScopeIndex {
 public:
  explicit ScopeIndex(Dwfl_Module* module) : module_(module) {}

  struct Scope {
    Dwarf_Die die;
    int32_t parent;  // enclosing function scope in the DIE tree (index in the CU's table), -1
  };
  // A hit: the CU of the address and the innermost function scope (nullptr when the address
  // has a CU but no function scope covers it).
  struct Hit {
    Dwarf_Die* cu = nullptr;
    Dwarf_Addr cu_address = 0;  // the address in the CU's terms (module address - CU bias)
    bool ambiguous = false;     // overlapping scopes: ask dwarf_getscopes
    const Scope* innermost = nullptr;
    const Scope* parent(const Scope& s) const;
    const std::vector<Scope>* scopes = nullptr;
  };
  // addr: module address (link-time address + bias). cu == nullptr when no CU covers it.
  Hit lookup(Dwarf_Addr addr);

  struct Segment {
    Dwarf_Addr start;  // CU address (module address - CU bias); runs to the next start
    int32_t scope;     // -1: no function scope here, kAmbiguous: overlapping scopes
  };
  static constexpr int32_t kAmbiguous = -2;

 private:
  struct CuTable {
    Dwarf_Die cu;
    std::vector<Scope> scopes;
    std::vector<Segment> segments;  // sorted by start
  };
  CuTable& table_for(Dwarf_Die* cu);

  Dwfl_Module* module_;
  std::unordered_map<const void*, std::unique_ptr<CuTable>> tables_;  // by the CU DIE's address
};

}  // namespace gp::symbolize
