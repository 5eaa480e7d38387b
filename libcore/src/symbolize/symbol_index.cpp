#include "symbol_index.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>

namespace gp::symbolize {
namespace {

size_t leading_underscores(const char* name) {
  size_t n = 0;
  while (name[n] == '_') ++n;
  return n;
}

template <typename E>
bool preferred(const E& a, const E& b) {
  // perf's choose_best_symbol: sized over sizeless, strong over weak, global over local, fewer
  // leading underscores, then the longer name.
  if ((a.size == 0) != (b.size == 0)) return a.size != 0;
  bool aw = GELF_ST_BIND(a.info) == STB_WEAK, bw = GELF_ST_BIND(b.info) == STB_WEAK;
  if (aw != bw) return !aw;
  bool ag = GELF_ST_BIND(a.info) == STB_GLOBAL, bg = GELF_ST_BIND(b.info) == STB_GLOBAL;
  if (ag != bg) return ag;
  size_t au = leading_underscores(a.name), bu = leading_underscores(b.name);
  if (au != bu) return au < bu;
  return std::strlen(a.name) > std::strlen(b.name);
}

// How far back a lookup looks for a sized symbol that still covers the address (symbols nested
// in larger ones, e.g. local labels inside a function).
constexpr size_t kMaxBacktrack = 16;

}  // namespace

SymbolIndex::SymbolIndex(Dwfl_Module* module) {
  int n = dwfl_module_getsymtab(module);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &addr, &shndx, nullptr, nullptr);
    int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || *name == '\0' || sym.st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
      continue;
    entries_.push_back({addr, sym.st_size, sym.st_info, name});
  }
  std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.start < b.start; });
  // One entry per address: the preferred alias.
  std::vector<Entry> unique;
  for (const Entry& e : entries_) {
    if (!unique.empty() && unique.back().start == e.start) {
      if (preferred(e, unique.back())) unique.back() = e;
    } else {
      unique.push_back(e);
    }
  }
  entries_ = std::move(unique);
}

const char* SymbolIndex::lookup(Dwarf_Addr addr) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), addr,
                             [](Dwarf_Addr a, const Entry& e) { return a < e.start; });
  if (it == entries_.begin()) return nullptr;
  auto at = std::prev(it);
  if (at->size == 0) {
    // Sizeless: it runs up to the next symbol (or, for the last one, is taken as is).
    return it == entries_.end() || addr < it->start ? at->name : nullptr;
  }
  for (size_t back = 0; back < kMaxBacktrack; ++back) {
    if (addr - at->start < at->size) return at->name;
    if (at == entries_.begin()) break;
    --at;
  }
  return nullptr;
}

}  // namespace gp::symbolize
