#include "gp/symbolize/module_resolver.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/go_pclntab.h"
#include "scope_index.h"
#include "symbol_index.h"

namespace gp::symbolize {

struct ModuleResolver::Impl {
  ResolverOptions options;
  std::optional<ElfFile> elf;  // program headers (offset → address) and .gopclntab
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Dwarf_Addr bias = 0;  // module address = link-time address + bias
  std::optional<GoPclntab> go;
  bool debug_layout = false;  // a separate debug file standing in for its binary
  std::optional<std::pair<uint64_t, uint64_t>>
      exec_segment;                    // first executable PT_LOAD: vaddr, memsz
  std::optional<SymbolIndex> symbols;  // built on first use
  struct Caches;
  std::unique_ptr<Caches> caches;

  Impl();
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  void end() {
    if (dwfl != nullptr) dwfl_end(dwfl);
    dwfl = nullptr;
  }
};

namespace {

// libdwfl asks for the separate debug file here (only when the binary lacks what it needs);
// the finder already chose it, build-id checked, so it is handed over as is.
int find_debuginfo(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                   GElf_Word, char** debuginfo_file_name) {
  auto* path = static_cast<const std::string*>(*userdata);
  if (path == nullptr || path->empty()) return -1;
  int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *debuginfo_file_name = ::strdup(path->c_str());
  return fd;
}

const Dwfl_Callbacks kCallbacks = {
    nullptr,  // find_elf: the file is reported with its fd
    find_debuginfo,
    dwfl_offline_section_address,
    nullptr,
};

std::string attr_string(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return {};
  const char* s = dwarf_formstring(&attr);
  return s == nullptr ? std::string() : std::string(s);
}

uint32_t attr_udata(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) return 0;
  return static_cast<uint32_t>(value);
}

void set_name(Frame& f, const std::string& linkage, const std::string& plain, DemangleMode mode) {
  if (!linkage.empty()) {
    f.name = demangle(linkage, mode);
    if (f.name != linkage) f.system_name = linkage;
  } else {
    f.name = plain;
  }
}

Frame frame_of_die(Dwarf_Die* die, const ResolverOptions& opt) {
  Frame f;
  std::string linkage = attr_string(die, DW_AT_linkage_name);
  if (linkage.empty()) linkage = attr_string(die, DW_AT_MIPS_linkage_name);
  set_name(f, linkage, attr_string(die, DW_AT_name), opt.demangle);
  if (opt.lines) {
    const char* decl = dwarf_decl_file(die);
    if (decl != nullptr) f.decl_file = decl;
    int line = 0;
    if (dwarf_decl_line(die, &line) == 0 && line > 0) f.decl_line = static_cast<uint32_t>(line);
  }
  return f;
}

std::string call_file(Dwarf_Die* cu, Dwarf_Die* inlined) {
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  Dwarf_Attribute attr;
  Dwarf_Word index = 0;
  if (dwarf_attr(inlined, DW_AT_call_file, &attr) == nullptr ||
      dwarf_formudata(&attr, &index) != 0 || dwarf_getsrcfiles(cu, &files, &count) != 0 ||
      index >= count)
    return {};
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  return name == nullptr ? std::string() : std::string(name);
}

// What one function-scope DIE contributes to every frame it names, computed once per DIE:
// demangling and the attribute lookups are most of a lookup's cost otherwise.
struct DieInfo {
  Frame frame;            // name, system_name, decl_file, decl_line
  std::string call_file;  // inlined subroutines (lines only): where the call is
  uint32_t call_line = 0;
  uint32_t call_column = 0;
};

}  // namespace

struct ModuleResolver::Impl::Caches {
  std::optional<ScopeIndex> scopes;                // built on first use
  std::unordered_map<const void*, DieInfo> dies;   // by DIE address
  std::unordered_map<const char*, Frame> symbols;  // demangled symbol names, by name pointer
  // Outermost frames: DWARF declaration (the DIE's slot, 0 for none) named by a symbol.
  std::map<std::pair<uint32_t, const char*>, uint32_t> renamed;
  uint32_t slots = 0;  // function slots handed out
};

namespace {

const DieInfo& die_info(ModuleResolver::Impl& im, Dwarf_Die* cu, Dwarf_Die* die) {
  auto [it, inserted] = im.caches->dies.try_emplace(die->addr);
  if (!inserted) return it->second;
  DieInfo& info = it->second;
  info.frame = frame_of_die(die, im.options);
  info.frame.function_slot = ++im.caches->slots;
  if (im.options.lines && dwarf_tag(die) == DW_TAG_inlined_subroutine) {
    info.call_file = call_file(cu, die);
    info.call_line = attr_udata(die, DW_AT_call_line);
    info.call_column = attr_udata(die, DW_AT_call_column);
  }
  return info;
}

bool is_function_scope(Dwarf_Die* die) {
  int tag = dwarf_tag(die);
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

// Builds an inline chain innermost first: each entry's line is the position inside that function
// (the innermost's from the line table, the others' from the call site of the entry before).
class ChainBuilder {
 public:
  ChainBuilder(ModuleResolver::Impl& im, Dwarf_Die* cu, Dwarf_Addr addr) : im_(im), cu_(cu) {
    if (!im.options.lines) return;
    if (Dwfl_Line* l = dwfl_module_getsrc(im.module, addr)) {
      int ln = 0, col = 0;
      const char* src = dwfl_lineinfo(l, nullptr, &ln, &col, nullptr, nullptr);
      file_ = src != nullptr ? src : "";
      line_ = static_cast<uint32_t>(ln > 0 ? ln : 0);
      column_ = static_cast<uint32_t>(col > 0 ? col : 0);
    }
  }
  // Adds the function of die; false when the chain ends with it.
  bool add(Dwarf_Die* die) {
    const DieInfo& info = die_info(im_, cu_, die);
    Frame f = info.frame;
    f.file = file_;
    f.line = line_;
    f.column = column_;
    chain_.push_back(std::move(f));
    if (dwarf_tag(die) != DW_TAG_inlined_subroutine || !im_.options.inlines) return false;
    if (im_.options.lines) {
      file_ = info.call_file;
      line_ = info.call_line;
      column_ = info.call_column;
    }
    return true;
  }
  std::vector<Frame> take() { return std::move(chain_); }

 private:
  ModuleResolver::Impl& im_;
  Dwarf_Die* cu_;
  std::vector<Frame> chain_;
  std::string file_;
  uint32_t line_ = 0, column_ = 0;
};

// The slow path, for the rare addresses the index calls ambiguous: libdw's own scope walk.
std::vector<Frame> getscopes_chain(ModuleResolver::Impl& im, Dwarf_Die* cu, Dwarf_Addr addr,
                                   Dwarf_Addr cu_addr) {
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(cu, cu_addr, &scopes);
  int first = 0;
  while (first < n && !is_function_scope(&scopes[first])) ++first;
  if (first >= n) {
    std::free(scopes);
    return {};
  }
  // dwarf_getscopes follows abstract origins; the physical nesting of the concrete inlined
  // instances is what the call sites hang off, so walk the innermost function's parents.
  Dwarf_Die innermost = scopes[first];
  std::free(scopes);
  Dwarf_Die* nest = nullptr;
  int m = dwarf_getscopes_die(&innermost, &nest);
  ChainBuilder chain(im, cu, addr);
  for (int i = 0; i < m; ++i)
    if (is_function_scope(&nest[i]) && !chain.add(&nest[i])) break;
  std::free(nest);
  return chain.take();
}

// The DWARF inline chain at addr, innermost first. Empty when the address has no DWARF.
std::vector<Frame> dwarf_chain(ModuleResolver::Impl& im, Dwarf_Addr addr) {
  auto& scopes = im.caches->scopes;
  if (!scopes) scopes.emplace(im.module);
  ScopeIndex::Hit hit = scopes->lookup(addr);
  if (hit.ambiguous) return getscopes_chain(im, hit.cu, addr, hit.cu_address);
  if (hit.innermost == nullptr) return {};
  ChainBuilder chain(im, hit.cu, addr);
  for (const ScopeIndex::Scope* s = hit.innermost; s != nullptr; s = hit.parent(*s)) {
    Dwarf_Die die = s->die;
    if (!chain.add(&die)) break;
  }
  return chain.take();
}

void find_exec_segment(const ElfFile& f, ModuleResolver::Impl& im) {
  size_t count = 0;
  if (elf_getphdrnum(f.elf(), &count) != 0) return;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(f.elf(), static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD ||
        (ph.p_flags & PF_X) == 0)
      continue;
    im.exec_segment.emplace(ph.p_vaddr, ph.p_memsz);
    // objcopy --only-keep-debug keeps the headers but empties the code segment.
    im.debug_layout = ph.p_filesz == 0 && ph.p_memsz != 0;
    return;
  }
}

}  // namespace

Result<std::unique_ptr<ModuleResolver>> ModuleResolver::open(const FoundFiles& files,
                                                             const ResolverOptions& options) {
  // The finder's open file when it is the binary found (taken: moved out of the shared holder).
  auto elf = files.opened && files.opened->path() == files.binary
                 ? Result<ElfFile>(std::move(*files.opened))
                 : ElfFile::open(files.binary);
  if (!elf) return make_error("cannot open '" + files.binary + "': " + elf.error().message);
  std::unique_ptr<ModuleResolver> r(new ModuleResolver());
  r->impl_ = std::make_unique<Impl>();
  Impl& im = *r->impl_;
  im.options = options;
  r->debug_path_ = files.debug;
  r->is_go_ = elf->has_section(".gopclntab") || elf->has_section(".note.go.buildid") ||
              elf->has_section(".go.buildinfo");
  im.dwfl = dwfl_begin(&kCallbacks);
  if (im.dwfl == nullptr) return make_error(std::string("dwfl_begin: ") + dwfl_errmsg(-1));
  dwfl_report_begin(im.dwfl);
  int fd = ::open(files.binary.c_str(), O_RDONLY | O_CLOEXEC);
  im.module =
      fd < 0 ? nullptr : dwfl_report_elf(im.dwfl, "module", files.binary.c_str(), fd, 0, false);
  if (im.module == nullptr) {
    if (fd >= 0) ::close(fd);
    return make_error("cannot load '" + files.binary + "': dwfl_report_elf: " + dwfl_errmsg(-1));
  }
  dwfl_report_end(im.dwfl, nullptr, nullptr);
  void** userdata = nullptr;
  dwfl_module_info(im.module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata != nullptr) *userdata = &r->debug_path_;
  if (dwfl_module_getelf(im.module, &im.bias) == nullptr)
    return make_error("cannot load '" + files.binary + "': " + dwfl_errmsg(-1));
  im.elf.emplace(std::move(*elf));
  find_exec_segment(*im.elf, im);
  if (r->is_go_) {
    auto text = im.elf->section(".text");
    if (auto tab = im.elf->section(".gopclntab")) {
      auto parsed = GoPclntab::parse(tab->data, text ? text->address : 0);
      if (parsed) im.go.emplace(std::move(*parsed));
    }
  }
  return r;
}

ModuleResolver::Impl::Impl() : caches(std::make_unique<Caches>()) {}
// The caches point into the Dwfl's data: gone before it is.
ModuleResolver::Impl::~Impl() {
  caches.reset();
  end();
}

ModuleResolver::~ModuleResolver() = default;

std::optional<uint64_t> ModuleResolver::link_address(uint64_t file_offset,
                                                     uint64_t mapping_offset) const {
  const Impl& im = *impl_;
  if (!im.debug_layout) return im.elf->address_of_offset(file_offset);
  // A separate debug file zeroes the segments' file offsets but keeps their addresses: place the
  // offset relative to the mapping's start in the executable segment instead (mappings start at
  // the page holding the segment's first byte, in the file and in memory alike).
  if (mapping_offset == kNoMapping || file_offset < mapping_offset || !im.exec_segment)
    return std::nullopt;
  uint64_t address = (im.exec_segment->first & ~uint64_t{0xfff}) + (file_offset - mapping_offset);
  if (address >= im.exec_segment->first + im.exec_segment->second) return std::nullopt;
  return address;
}

std::vector<Frame> ModuleResolver::resolve(uint64_t file_offset, bool return_address,
                                           uint64_t mapping_offset) {
  Impl& im = *impl_;
  auto linked = link_address(file_offset, mapping_offset);
  if (!linked) return {};
  // pc-1: a return address points after the call, possibly into the next line or function.
  uint64_t pc = *linked - (return_address && *linked > 0 ? 1 : 0);
  Dwarf_Addr addr = pc + im.bias;

  std::vector<Frame> chain = dwarf_chain(im, addr);
  if (chain.empty() && im.go) {
    // Go's DWARF often has no address ranges libdw can use; .gopclntab always has names and lines.
    if (auto fn = im.go->lookup(pc)) {
      Frame f;
      f.name = fn->name;
      if (im.options.lines) {
        f.file = fn->file;
        f.line = static_cast<uint32_t>(fn->line > 0 ? fn->line : 0);
      }
      return {std::move(f)};
    }
  }
  if (!im.symbols) im.symbols.emplace(im.module);
  const char* symbol = im.symbols->lookup(addr);
  if (symbol != nullptr) {
    // The outermost function is named from the symbol table, as perf and addr2line -f do
    // (it names clones like foo.cold / foo.constprop.0 that DWARF folds into foo).
    if (chain.empty()) chain.emplace_back();
    auto [it, inserted] = im.caches->symbols.try_emplace(symbol);
    if (inserted) set_name(it->second, symbol, symbol, im.options.demangle);
    Frame& outer = chain.back();
    outer.name = it->second.name;
    outer.system_name = it->second.system_name;
    auto [slot, added] = im.caches->renamed.try_emplace({outer.function_slot, symbol}, 0);
    if (added) slot->second = ++im.caches->slots;
    outer.function_slot = slot->second;
  }
  std::vector<Frame> outermost_first(chain.rbegin(), chain.rend());
  return outermost_first;
}

}  // namespace gp::symbolize
