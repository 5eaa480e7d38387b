// ModuleResolver against the fixture ELFs: names from DWARF, .symtab, .dynsym and MiniDebugInfo,
// inline chains with lines, pc-1 for return addresses, demangling, Go.
#include <gelf.h>
#include <gtest/gtest.h>

#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/module_resolver.h"
#include "symbolize_fixture_test.h"

namespace gp::test::symbolize {
namespace {

using gp::symbolize::DemangleMode;
using gp::symbolize::ElfFile;
using gp::symbolize::FoundFiles;
using gp::symbolize::Frame;
using gp::symbolize::ModuleResolver;
using gp::symbolize::ResolverOptions;

// File offset of a link-time address (what a Location carries).
uint64_t offset_of(const std::string& path, uint64_t address) {
  auto f = ElfFile::open(path);
  EXPECT_TRUE(f);
  for (uint64_t off = address & ~0xfffull;;
       off -= 0x1000) {  // segments keep vaddr ≡ offset (mod page)
    auto a = f->address_of_offset(off + (address & 0xfff));
    if (a && *a == address) return off + (address & 0xfff);
    if (off == 0) break;
  }
  ADD_FAILURE() << "no segment maps " << std::hex << address;
  return 0;
}

// Mapping.file_offset of the executable mapping holding a file offset, as /proc/PID/maps shows it.
uint64_t mapping_offset_of(const std::string& path, uint64_t file_offset) {
  auto f = ElfFile::open(path);
  size_t count = 0;
  elf_getphdrnum(f->elf(), &count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    gelf_getphdr(f->elf(), static_cast<int>(i), &ph);
    if (ph.p_type == PT_LOAD && file_offset >= ph.p_offset &&
        file_offset < ph.p_offset + ph.p_filesz)
      return ph.p_offset & ~0xfffull;
  }
  return ModuleResolver::kNoMapping;
}

std::unique_ptr<ModuleResolver> open(const std::string& binary, const std::string& debug = "",
                                     ResolverOptions options = {}) {
  FoundFiles files;
  files.status = gp::symbolize::FindStatus::found;
  files.binary = binary;
  files.debug = debug;
  auto r = ModuleResolver::open(files, options);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? std::move(*r) : nullptr;
}

std::vector<std::string> frame_names(const std::vector<Frame>& frames) {
  std::vector<std::string> out;
  for (const auto& f : frames) out.push_back(f.name);
  return out;
}

std::vector<std::string> resolve_symbol(ModuleResolver& r, const std::string& name,
                                        uint64_t delta = 4) {
  Symbol s = symbol(fixture("sym_fp"), name);
  return frame_names(r.resolve(offset_of(fixture("sym_fp"), s.address + delta), false));
}

TEST(ModuleResolver, NamesFunctionsOfABinaryWithDwarf) {
  auto r = open(fixture("sym_fp"));
  ASSERT_TRUE(r);
  for (const char* name : {"fp_leaf", "fp_middle", "fp_outer", "main"})
    EXPECT_EQ(resolve_symbol(*r, name), std::vector<std::string>{name});
  EXPECT_FALSE(r->is_go());
}

TEST(ModuleResolver, ReturnAddressNamesTheCallNotTheNextFunction) {
  // fp_fatal ends with `call abort`: its return address is the first byte after the function.
  Symbol fatal = symbol(fixture("sym_fp"), "fp_fatal");
  ASSERT_NE(fatal.size, 0u);
  auto r = open(fixture("sym_fp"));
  uint64_t after = offset_of(fixture("sym_fp"), fatal.address + fatal.size);
  EXPECT_EQ(frame_names(r->resolve(after, true)), std::vector<std::string>{"fp_fatal"});
  EXPECT_NE(frame_names(r->resolve(after, false)), std::vector<std::string>{"fp_fatal"});
}

TEST(ModuleResolver, NamesPltStubsAfterTheirTargetAsPerfDoes) {
  // objdump names each stub "<symbol>@plt" from .rela.plt, as perf does; without that the stub
  // would be taken for the sizeless `_init` before it.
  std::string listing;
  ASSERT_EQ(
      sh("objdump -d -j .plt -j .plt.sec " + fixture("sym_cpptempl") + " | grep '<_Znwm@plt>:'",
         &listing),
      0);
  uint64_t stub = std::stoull(listing.substr(0, listing.find(' ')), nullptr, 16);
  ResolverOptions simplified;
  simplified.demangle = DemangleMode::simplified;  // perf report's default: no parameters
  auto r = open(fixture("sym_cpptempl"), "", simplified);
  ASSERT_TRUE(r);
  EXPECT_EQ(frame_names(r->resolve(offset_of(fixture("sym_cpptempl"), stub + 4), false)),
            std::vector<std::string>{"operator new@plt"});
}

TEST(ModuleResolver, StrippedBinaryNeedsItsDebugFile) {
  TempDir dir;
  ASSERT_EQ(sh("objcopy --only-keep-debug " + fixture("sym_nofp") + " " + (dir / "nofp.debug")), 0);
  ASSERT_EQ(sh("strip --strip-all -o " + (dir / "nofp") + " " + fixture("sym_nofp")), 0);
  Symbol leaf = symbol(fixture("sym_nofp"), "fp_leaf");
  uint64_t off = offset_of(fixture("sym_nofp"), leaf.address + 2);
  EXPECT_TRUE(open(dir / "nofp")->resolve(off, false).empty());
  EXPECT_EQ(frame_names(open(dir / "nofp", dir / "nofp.debug")->resolve(off, false)),
            std::vector<std::string>{"fp_leaf"});
  // The debug file alone serves as the binary: it keeps program headers and .symtab.
  uint64_t mapped_at = mapping_offset_of(fixture("sym_nofp"), off);
  EXPECT_EQ(frame_names(open(dir / "nofp.debug")->resolve(off, false, mapped_at)),
            std::vector<std::string>{"fp_leaf"});
  EXPECT_TRUE(open(dir / "nofp.debug")->resolve(off, false).empty())
      << "debug files need the mapping";
}

TEST(ModuleResolver, NamesFromMiniDebugInfo) {
  TempDir dir;
  std::string bin = fixture("sym_fp");
  // The Fedora recipe: function symbols only, xz-compressed into .gnu_debugdata of a stripped file.
  std::string script = "cd '" + dir.path() + "' && nm --format=posix --defined-only " + bin +
                       " | awk '$2 ~ /^[Tt]$/ {print $1}' | sort > funcs && "
                       "objcopy --only-keep-debug " +
                       bin +
                       " full.debug && "
                       "objcopy -S --remove-section .gdb_index --remove-section .comment "
                       "--keep-symbols=funcs full.debug mini && "
                       "xz mini && strip --strip-all -o stripped " +
                       bin +
                       " && "
                       "objcopy --add-section .gnu_debugdata=mini.xz stripped";
  ASSERT_EQ(sh(script), 0);
  Symbol middle = symbol(bin, "fp_middle");
  auto r = open(dir / "stripped");
  EXPECT_EQ(frame_names(r->resolve(offset_of(bin, middle.address + 1), false)),
            std::vector<std::string>{"fp_middle"});
}

TEST(ModuleResolver, ExpandsInlineChainsOutermostFirstWithLines) {
  std::string bin = fixture("sym_inline");
  Symbol outer = symbol(bin, "inl_outer");
  ASSERT_NE(outer.size, 0u);
  ResolverOptions opt;
  opt.lines = true;
  auto r = open(bin, "", opt);
  uint32_t inner_line = line_of(source("inline.c"), "MARK_INNER");
  bool found = false;
  for (uint64_t a = outer.address; a < outer.address + outer.size && !found; ++a) {
    auto frames = r->resolve(offset_of(bin, a), false);
    if (frames.size() != 3 || frames[2].line != inner_line) continue;
    found = true;
    EXPECT_EQ(frame_names(frames),
              (std::vector<std::string>{"inl_outer", "inl_middle", "inl_inner"}));
    EXPECT_EQ(frames[0].line, line_of(source("inline.c"), "MARK_CALL_MIDDLE"));
    EXPECT_EQ(frames[1].line, line_of(source("inline.c"), "MARK_CALL_INNER"));
    EXPECT_NE(frames[2].file.find("inline.c"), std::string::npos);
    EXPECT_NE(frames[1].decl_line, 0u);
  }
  EXPECT_TRUE(found) << "no address of inl_outer resolves to the inner loop line " << inner_line;
}

TEST(ModuleResolver, NoInlineOptionKeepsOnlyTheOutermostFunction) {
  std::string bin = fixture("sym_inline");
  Symbol outer = symbol(bin, "inl_outer");
  ResolverOptions opt;
  opt.inlines = false;
  auto r = open(bin, "", opt);
  for (uint64_t a = outer.address; a < outer.address + outer.size; a += 3)
    EXPECT_EQ(frame_names(r->resolve(offset_of(bin, a), false)),
              std::vector<std::string>{"inl_outer"});
}

TEST(ModuleResolver, DemanglesCppTemplatesPerMode) {
  std::string bin = fixture("sym_cpptempl");
  Symbol push = symbol(bin, "_ZN2ns5StackIiE4pushERKi");
  ASSERT_NE(push.address, 0u);
  const std::pair<DemangleMode, const char*> expected[] = {
      {DemangleMode::full, "ns::Stack<int>::push(int const&)"},
      {DemangleMode::templates, "ns::Stack<int>::push"},
      {DemangleMode::simplified, "ns::Stack::push"},
      {DemangleMode::none, "_ZN2ns5StackIiE4pushERKi"},
  };
  for (const auto& [mode, name] : expected) {
    ResolverOptions opt;
    opt.demangle = mode;
    auto frames = open(bin, "", opt)->resolve(offset_of(bin, push.address + 1), false);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.front().name, name);
    if (mode != DemangleMode::none) {
      EXPECT_EQ(frames.front().system_name, "_ZN2ns5StackIiE4pushERKi");
    }
  }
}

TEST(ModuleResolver, NamesStaticFunctionsOfASharedLibrary) {
  std::string lib = fixture("libsym_shared.so");
  auto r = open(lib);
  for (const char* name : {"shared_work", "shared_private_step"}) {
    Symbol s = symbol(lib, name);
    ASSERT_NE(s.address, 0u) << name;
    EXPECT_EQ(frame_names(r->resolve(offset_of(lib, s.address + 1), false)),
              std::vector<std::string>{name});
  }
}

TEST(ModuleResolver, NamesExportedFunctionsFromDynsymAlone) {
  TempDir dir;
  std::string lib = fixture("libsym_shared.so");
  ASSERT_EQ(sh("strip --strip-all -o " + (dir / "lib.so") + " " + lib), 0);
  auto r = open(dir / "lib.so");
  Symbol s = symbol(lib, "shared_work");
  EXPECT_EQ(frame_names(r->resolve(offset_of(lib, s.address + 1), false)),
            std::vector<std::string>{"shared_work"});
}

#ifdef GP_SYM_HAVE_GO
TEST(ModuleResolver, NamesGoFunctionsWithAndWithoutSymtab) {
  std::string bin = fixture("sym_go");
  Symbol work = symbol(bin, "main.work");
  ASSERT_NE(work.address, 0u);
  ResolverOptions opt;
  opt.lines = true;
  for (const std::string& file : {fixture("sym_go"), fixture("sym_go_stripped")}) {
    auto r = open(file, "", opt);
    ASSERT_TRUE(r->is_go()) << file;
    auto frames = r->resolve(offset_of(bin, work.address + 8), false);
    ASSERT_FALSE(frames.empty()) << file;
    EXPECT_EQ(frames.back().name, "main.work") << file;
    EXPECT_NE(frames.back().file.find("gohello.go"), std::string::npos) << file;
    EXPECT_GE(frames.back().line, line_of(source("gohello.go"), "func work(")) << file;
  }
  // The stripped one really has no .symtab: its names come from .gopclntab.
  auto stripped = ElfFile::open(fixture("sym_go_stripped"));
  EXPECT_FALSE(stripped->has_section(".symtab"));
  EXPECT_TRUE(stripped->has_section(".gopclntab"));
}
#endif

}  // namespace
}  // namespace gp::test::symbolize
