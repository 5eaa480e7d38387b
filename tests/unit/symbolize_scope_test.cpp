// ModuleResolver's per-CU scope index against libdw's own dwarf_getscopes (what the resolver
// called per address before the index): the same inline chains, names and lines at every byte of
// the inline and C++ fixtures, and at addresses spread over this test binary (large C++ with
// deep inlining, when it was built with -g).
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/module_resolver.h"
#include "symbolize_fixture_test.h"

namespace gp::test::symbolize {
namespace {

using gp::symbolize::DemangleMode;
using gp::symbolize::ElfFile;
using gp::symbolize::Frame;
using gp::symbolize::ModuleResolver;
using gp::symbolize::ResolverOptions;

// The reference: one offline Dwfl and dwarf_getscopes per address, innermost first.
class Reference {
 public:
  explicit Reference(const std::string& path) {
    static const Dwfl_Callbacks callbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                             dwfl_offline_section_address, nullptr};
    dwfl_ = dwfl_begin(&callbacks);
    module_ = dwfl_report_offline(dwfl_, "ref", path.c_str(), -1);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    if (module_ != nullptr) dwfl_module_getelf(module_, &bias_);
  }
  ~Reference() { dwfl_end(dwfl_); }
  bool ok() const { return module_ != nullptr; }

  std::vector<Frame> chain(uint64_t address) {
    std::vector<Frame> out;
    Dwarf_Addr addr = address + bias_, cu_bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(module_, addr, &cu_bias);
    Dwarf_Die* scopes = nullptr;
    int n = cu == nullptr ? 0 : dwarf_getscopes(cu, addr - cu_bias, &scopes);
    int first = 0;
    while (first < n && !is_function(&scopes[first])) ++first;
    if (first >= n) {
      std::free(scopes);
      return out;
    }
    Dwarf_Die innermost = scopes[first];
    std::free(scopes);
    Dwarf_Die* nest = nullptr;
    int m = dwarf_getscopes_die(&innermost, &nest);
    Frame at = line_at(addr);
    for (int i = 0; i < m; ++i) {
      if (!is_function(&nest[i])) continue;
      Frame f = at;
      f.name = name_of(&nest[i]);
      int decl = 0;
      if (dwarf_decl_line(&nest[i], &decl) == 0) f.decl_line = static_cast<uint32_t>(decl);
      const char* decl_file = dwarf_decl_file(&nest[i]);
      f.decl_file = decl_file != nullptr ? decl_file : "";
      out.push_back(f);
      if (dwarf_tag(&nest[i]) != DW_TAG_inlined_subroutine) break;
      at = call_site(cu, &nest[i]);
    }
    std::free(nest);
    return out;
  }

 private:
  static bool is_function(Dwarf_Die* d) {
    int t = dwarf_tag(d);
    return t == DW_TAG_subprogram || t == DW_TAG_inlined_subroutine || t == DW_TAG_entry_point;
  }
  static std::string name_of(Dwarf_Die* d) {
    Dwarf_Attribute a;
    for (unsigned int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name})
      if (dwarf_attr_integrate(d, at, &a) != nullptr && dwarf_formstring(&a) != nullptr)
        return dwarf_formstring(&a);
    return {};
  }
  static uint32_t udata(Dwarf_Die* d, unsigned int name) {
    Dwarf_Attribute a;
    Dwarf_Word v = 0;
    if (dwarf_attr(d, name, &a) == nullptr || dwarf_formudata(&a, &v) != 0) return 0;
    return static_cast<uint32_t>(v);
  }
  Frame line_at(Dwarf_Addr addr) {
    Frame f;
    int ln = 0, col = 0;
    Dwfl_Line* l = dwfl_module_getsrc(module_, addr);
    const char* src =
        l == nullptr ? nullptr : dwfl_lineinfo(l, nullptr, &ln, &col, nullptr, nullptr);
    f.file = src != nullptr ? src : "";
    f.line = static_cast<uint32_t>(ln > 0 ? ln : 0);
    f.column = static_cast<uint32_t>(col > 0 ? col : 0);
    return f;
  }
  static Frame call_site(Dwarf_Die* cu, Dwarf_Die* inlined) {
    Frame f;
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    uint32_t index = udata(inlined, DW_AT_call_file);
    if (dwarf_getsrcfiles(cu, &files, &count) == 0 && index < count &&
        dwarf_filesrc(files, index, nullptr, nullptr))
      f.file = dwarf_filesrc(files, index, nullptr, nullptr);
    f.line = udata(inlined, DW_AT_call_line);
    f.column = udata(inlined, DW_AT_call_column);
    return f;
  }

  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  Dwarf_Addr bias_ = 0;
};

struct ExecSegment {
  uint64_t vaddr = 0, offset = 0, size = 0;
};

ExecSegment exec_segment(const std::string& path) {
  auto f = ElfFile::open(path);
  EXPECT_TRUE(f);
  size_t count = 0;
  elf_getphdrnum(f->elf(), &count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    gelf_getphdr(f->elf(), static_cast<int>(i), &ph);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0)
      return {ph.p_vaddr, ph.p_offset, ph.p_filesz};
  }
  ADD_FAILURE() << "no executable segment in " << path;
  return {};
}

// Compares the resolver with the reference at `count` addresses spread over the executable
// segment (every byte when count >= its size). The outermost name comes from the symbol table
// in the resolver, so it is compared only where the DWARF chain is inlined into it.
void expect_same_chains(const std::string& path, uint64_t count) {
  Reference ref(path);
  ASSERT_TRUE(ref.ok()) << path;
  ResolverOptions opt;
  opt.lines = true;
  opt.demangle = DemangleMode::none;
  gp::symbolize::FoundFiles files;
  files.status = gp::symbolize::FindStatus::found;
  files.binary = path;
  auto resolver = ModuleResolver::open(files, opt);
  ASSERT_TRUE(resolver) << resolver.error().message;
  ExecSegment seg = exec_segment(path);
  uint64_t stride = std::max<uint64_t>(1, seg.size / count) | 1;  // odd: no alignment bias
  size_t inlined = 0, failures = 0;
  for (uint64_t delta = 0; delta < seg.size && failures < 5; delta += stride) {
    std::vector<Frame> want = ref.chain(seg.vaddr + delta);
    std::vector<Frame> got = (*resolver)->resolve(seg.offset + delta, false);
    std::reverse(got.begin(), got.end());  // innermost first, as the reference
    if (want.empty()) {
      if (got.size() > 1) ++failures;
      EXPECT_LE(got.size(), 1u) << path << " +0x" << std::hex << delta;
      continue;
    }
    inlined += want.size() > 1;
    bool same = got.size() == want.size();
    for (size_t i = 0; same && i < want.size(); ++i) {
      same = got[i].file == want[i].file && got[i].line == want[i].line &&
             got[i].column == want[i].column && got[i].decl_file == want[i].decl_file &&
             got[i].decl_line == want[i].decl_line &&
             (i + 1 == want.size() || got[i].name == want[i].name);
    }
    if (!same) {
      ++failures;
      ADD_FAILURE() << path << " +0x" << std::hex << delta << ": " << got.size() << " frames, want "
                    << want.size() << " (innermost " << want[0].name << " " << want[0].file << ":"
                    << std::dec << want[0].line << ")";
    }
  }
  EXPECT_EQ(failures, 0u);
  if (count >= seg.size) {
    EXPECT_GT(inlined, 0u) << path << " has no inlined code to compare";
  }
}

TEST(ScopeIndex, SameChainsAsDwarfGetscopesAtEveryByteOfTheFixtures) {
  expect_same_chains(fixture("sym_inline"), ~uint64_t{0});
  expect_same_chains(fixture("sym_cpptempl"), ~uint64_t{0});
  expect_same_chains(fixture("sym_nofp"), ~uint64_t{0});
}

TEST(ScopeIndex, SameChainsAsDwarfGetscopesAcrossALargeCppBinary) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  auto f = ElfFile::open(self);
  ASSERT_TRUE(f);
  if (!f->has_dwarf()) GTEST_SKIP() << "gp_unit_tests was built without -g (CMAKE_BUILD_TYPE)";
  expect_same_chains(self, 400);
}

}  // namespace
}  // namespace gp::test::symbolize
