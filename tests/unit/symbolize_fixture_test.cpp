#include "symbolize_fixture_test.h"

#include <gelf.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "gp/symbolize/elf_file.h"

namespace gp::test::symbolize {

std::string fixture(const std::string& name) { return std::string(GP_SYM_FIXTURES) + "/" + name; }
std::string source(const std::string& name) { return std::string(GP_SYM_SOURCES) + "/" + name; }

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp != nullptr ? tmp : "/tmp") + "/gp-symbolize-test.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}
TempDir::~TempDir() { sh("rm -rf '" + path_ + "'"); }

int sh(const std::string& command, std::string* out) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  std::string text;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  int status = ::pclose(p);
  if (out != nullptr) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void copy_file(const std::string& from, const std::string& to) {
  ASSERT_EQ(sh("cp '" + from + "' '" + to + "'"), 0) << from;
}

Symbol symbol(const std::string& path, const std::string& name) {
  std::string out;
  sh("nm -S --defined-only '" + path + "'", &out);
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string addr, size, type, sym;
    if (!(fields >> addr >> size >> type >> sym)) continue;
    if (sym == name) return {std::stoull(addr, nullptr, 16), std::stoull(size, nullptr, 16)};
  }
  return {};
}

uint32_t line_of(const std::string& file, const std::string& marker) {
  std::ifstream in(file);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  return 0;
}

void add_to_store(const std::string& store, const std::string& debug_file, bool as_binary) {
  auto f = gp::symbolize::ElfFile::open(debug_file);
  ASSERT_TRUE(f) << debug_file;
  std::string dst =
      store + "/" + gp::symbolize::build_id_relpath(f->build_id()) + (as_binary ? "" : ".debug");
  ASSERT_EQ(sh("mkdir -p \"$(dirname '" + dst + "')\" && cp '" + debug_file + "' '" + dst + "'"),
            0);
}

Loaded load(model::SessionBuilder& b, const std::string& path, uint64_t base, int32_t pid,
            const std::string& recorded_path) {
  Loaded loaded;
  loaded.base = base;
  auto f = gp::symbolize::ElfFile::open(path);
  if (!f) return loaded;
  size_t count = 0;
  elf_getphdrnum(f->elf(), &count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(f->elf(), static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD ||
        (ph.p_flags & PF_X) == 0)
      continue;
    model::Mapping m;
    m.pid = pid;
    m.start = base + (ph.p_vaddr & ~0xfffull);
    m.end = base + ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull);
    m.file_offset = ph.p_offset & ~0xfffull;
    m.path = recorded_path.empty() ? path : recorded_path;
    m.build_id = f->build_id();
    loaded.mapping_ids.push_back(b.mapping(m));
  }
  return loaded;
}

uint64_t mapping_for(const model::Session& s, const Loaded& loaded, uint64_t addr) {
  for (uint64_t id : loaded.mapping_ids)
    if (addr >= s.mapping(id).start && addr < s.mapping(id).end) return id;
  return 0;
}

uint64_t add_location(model::SessionBuilder& b, const Loaded& loaded, uint64_t link_address,
                      bool is_return) {
  uint64_t addr = loaded.address(link_address);
  uint64_t mapping = mapping_for(b.session(), loaded, addr);
  EXPECT_NE(mapping, 0u) << std::hex << link_address;
  return b.address_location(mapping, addr, model::FrameKind::unknown, is_return);
}

std::vector<std::string> names(const model::Session& s, uint64_t location_id) {
  std::vector<std::string> out;
  for (const auto& line : s.location(location_id).lines)
    out.push_back(s.function(line.function_id).name);
  return out;
}

TEST(SymbolizeFixtures, AreBuiltWithBuildIdsAndDebugInfo) {
  for (const char* name :
       {"sym_fp", "sym_nofp", "sym_inline", "sym_cpptempl", "sym_useshared", "libsym_shared.so"}) {
    auto f = gp::symbolize::ElfFile::open(fixture(name));
    ASSERT_TRUE(f) << name;
    EXPECT_EQ(f->build_id().size(), 20u) << name;
    EXPECT_TRUE(f->has_dwarf()) << name;
  }
  EXPECT_NE(symbol(fixture("sym_fp"), "fp_leaf").address, 0u);
}

}  // namespace gp::test::symbolize
