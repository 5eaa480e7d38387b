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

// A sizeless, untyped symbol in code, such as ld.so's `_start` (an assembly label): perf names
// the code up to the next symbol after it, and so does gp.
bool is_code_label(Elf* elf, const GElf_Sym& sym, GElf_Word shndx) {
  if (GELF_ST_TYPE(sym.st_info) != STT_NOTYPE || sym.st_size != 0 || elf == nullptr ||
      shndx == SHN_UNDEF || shndx == SHN_ABS || shndx >= SHN_LORESERVE)
    return false;
  GElf_Shdr shdr;
  Elf_Scn* scn = elf_getscn(elf, shndx);
  return scn != nullptr && gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_EXECINSTR);
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
    Elf* elf = nullptr;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &addr, &shndx, &elf, nullptr);
    int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || *name == '\0' || sym.st_shndx == SHN_UNDEF) continue;
    if (type != STT_FUNC && type != STT_GNU_IFUNC && !is_code_label(elf, sym, shndx)) continue;
    entries_.push_back({addr, sym.st_size, sym.st_info, name});
  }
  add_plt_stubs(module);
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.start < b.start; });
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

namespace {

Elf_Scn* section_named(Elf* elf, size_t shstrndx, const char* wanted, GElf_Shdr* shdr) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    if (gelf_getshdr(scn, shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr->sh_name);
    if (name != nullptr && std::strcmp(name, wanted) == 0) return scn;
  }
  return nullptr;
}

}  // namespace

void SymbolIndex::add_plt_stubs(Dwfl_Module* module) {
  constexpr GElf_Xword kStubSize = 16;  // x86-64 lazy-binding and IBT (.plt.sec) stubs
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  GElf_Ehdr ehdr;
  size_t shstrndx = 0;
  if (elf == nullptr || gelf_getehdr(elf, &ehdr) == nullptr || ehdr.e_machine != EM_X86_64 ||
      elf_getshdrstrndx(elf, &shstrndx) != 0)
    return;
  GElf_Shdr rela_hdr, plt_hdr, sec_hdr, dynsym_hdr;
  Elf_Scn* rela = section_named(elf, shstrndx, ".rela.plt", &rela_hdr);
  Elf_Scn* plt = section_named(elf, shstrndx, ".plt", &plt_hdr);
  Elf_Scn* plt_sec = section_named(elf, shstrndx, ".plt.sec", &sec_hdr);
  if (rela == nullptr || plt == nullptr || rela_hdr.sh_type != SHT_RELA ||
      plt_hdr.sh_type == SHT_NOBITS)
    return;
  Elf_Scn* dynsym = elf_getscn(elf, rela_hdr.sh_link);
  Elf_Data* rela_data = elf_getdata(rela, nullptr);
  Elf_Data* sym_data = dynsym ? elf_getdata(dynsym, nullptr) : nullptr;
  if (rela_data == nullptr || sym_data == nullptr || gelf_getshdr(dynsym, &dynsym_hdr) == nullptr)
    return;
  // With IBT the callable stubs live in .plt.sec (entry i); otherwise .plt entry i + 1 (after
  // PLT0).
  GElf_Addr first = plt_sec ? sec_hdr.sh_addr : plt_hdr.sh_addr + kStubSize;
  GElf_Xword limit = plt_sec ? sec_hdr.sh_size : plt_hdr.sh_size - kStubSize;
  size_t count = rela_hdr.sh_entsize ? rela_hdr.sh_size / rela_hdr.sh_entsize : 0;
  for (size_t i = 0; i < count && (i + 1) * kStubSize <= limit; ++i) {
    GElf_Rela r;
    GElf_Sym sym;
    if (gelf_getrela(rela_data, static_cast<int>(i), &r) == nullptr ||
        gelf_getsym(sym_data, static_cast<int>(GELF_R_SYM(r.r_info)), &sym) == nullptr)
      continue;
    const char* name = elf_strptr(elf, dynsym_hdr.sh_link, sym.st_name);
    // A stub without a symbol (an IRELATIVE one) is "@plt", as perf names it.
    if (name == nullptr) continue;
    plt_names_.push_back(std::string(name) + "@plt");
    entries_.push_back({first + i * kStubSize + bias, kStubSize,
                        static_cast<unsigned char>(GELF_ST_INFO(STB_GLOBAL, STT_FUNC)),
                        plt_names_.back().c_str()});
  }
}

const char* SymbolIndex::lookup(Dwarf_Addr addr) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), addr,
                             [](Dwarf_Addr a, const Entry& e) { return a < e.start; });
  if (it == entries_.begin()) return nullptr;
  auto nearest = std::prev(it);
  // A sized symbol that covers the address wins over a sizeless one (a label inside it).
  for (auto at = nearest;; --at) {
    if (at->size != 0 && addr - at->start < at->size) return at->name;
    if (at == entries_.begin() || nearest - at + 1 >= static_cast<ptrdiff_t>(kMaxBacktrack)) break;
  }
  // Sizeless: it runs up to the next symbol (or, for the last one, is taken as is).
  if (nearest->size == 0) return nearest->name;
  return nullptr;
}

}  // namespace gp::symbolize
