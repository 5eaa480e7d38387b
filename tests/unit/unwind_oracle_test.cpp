// gp's unwind tables against elfutils' CFI API (dwarf_cfi_addrframe, dwarf_frame_cfa,
// dwarf_frame_register) at every row of Debian's own binaries, the test-built fixtures (.eh_frame
// and .debug_frame) and this process's vDSO.

#include <sys/auxv.h>

#include <fstream>
#include <string>

#include "unwind_support.h"

namespace gp::test::unwind {
namespace {

Table build_or_fail(const ElfFile& f, const std::string& path) {
  auto t = gp::unwind::build_table(f.fd());
  EXPECT_TRUE(t.ok()) << path << ": " << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : Table{};
}

Table check_file(const std::string& path, size_t min_rows) {
  if (!file_exists(path)) return Table{};
  ElfFile f(path);
  EXPECT_NE(f.elf(), nullptr);
  if (f.elf() == nullptr) return Table{};
  const Table t = build_or_fail(f, path);
  expect_invariants(t);
  EXPECT_GE(t.rows.size(), min_rows) << path;
  EXPECT_GT(t.stats.fdes, 0u);
  const size_t compared = compare_with_elfutils(t, f);
  EXPECT_GE(compared, 2 * t.rows.size() - 1);
  // Debian's compilers describe nearly every instruction with rsp/rbp rules; a table that is
  // mostly unsupported would unwind nothing.
  EXPECT_LT(count_rule(t, Rule::unsupported) * 100, t.rows.size()) << path;
  return t;
}

TEST(UnwindOracle, LibcAgreesWithElfutils) {
  if (!file_exists("/lib/x86_64-linux-gnu/libc.so.6"))
    GTEST_SKIP() << "/lib/x86_64-linux-gnu/libc.so.6 is not installed on this machine";
  check_file("/lib/x86_64-linux-gnu/libc.so.6", 10000);
}

TEST(UnwindOracle, Python311AgreesWithElfutils) {
  if (!file_exists("/usr/bin/python3.11"))
    GTEST_SKIP() << "/usr/bin/python3.11 is not installed on this machine";
  check_file("/usr/bin/python3.11", 20000);
}

TEST(UnwindOracle, XzAgreesWithElfutils) {
  if (!file_exists("/usr/bin/xz")) GTEST_SKIP() << "/usr/bin/xz is not installed on this machine";
  check_file("/usr/bin/xz", 500);
}

TEST(UnwindOracle, LibcryptoAgreesWithElfutils) {
  const std::string path = "/lib/x86_64-linux-gnu/libcrypto.so.3";
  if (!file_exists(path)) GTEST_SKIP() << path << " is not installed on this machine";
  const Table t = check_file(path, 20000);
  // OpenSSL's assembly keeps the caller's rsp in a stack slot while its frame is realigned
  // (DW_OP_breg7 N; DW_OP_deref; DW_OP_plus_uconst 8): AES-GCM, SHA, ChaCha bodies.
  EXPECT_GE(count_rule(t, Rule::deref_rsp), 40u);
}

TEST(UnwindOracle, EhFrameFixtureAgreesWithElfutils) {
  ElfFile f(GP_UNWIND_EH_FRAME_FIXTURE);
  ASSERT_NE(f.elf(), nullptr);
  const Table t = build_or_fail(f, GP_UNWIND_EH_FRAME_FIXTURE);
  EXPECT_EQ(t.stats.source, gp::unwind::Source::eh_frame);
  expect_invariants(t);
  compare_with_elfutils(t, f);
  // with_vla's variable-length array makes GCC set up an rbp frame even without frame pointers.
  EXPECT_GE(count_rule(t, Rule::rbp), 1u);
  EXPECT_GE(count_rule(t, Rule::rsp), 4u);
  EXPECT_EQ(count_rule(t, Rule::unsupported), 0u);
}

TEST(UnwindOracle, DebugFrameFixtureAgreesWithElfutils) {
  ElfFile f(GP_UNWIND_DEBUG_FRAME_FIXTURE);
  ASSERT_NE(f.elf(), nullptr);
  ASSERT_TRUE(f.section(".debug_frame")) << "the fixture was built without .debug_frame";
  const Table t = build_or_fail(f, GP_UNWIND_DEBUG_FRAME_FIXTURE);
  // Its .eh_frame holds only the crt's and the linker's FDEs (_start, the PLT); the functions
  // are in .debug_frame: both are used.
  EXPECT_EQ(t.stats.source, gp::unwind::Source::both);
  expect_invariants(t);
  compare_with_elfutils(t, f);
  const auto main_sym = f.symbol("main");
  ASSERT_TRUE(main_sym);
  EXPECT_EQ(row_at(t, main_sym->first).rule, Rule::rsp);
  EXPECT_EQ(row_at(t, f.entry()).rule, Rule::end) << "_start comes from .eh_frame";
  EXPECT_GE(count_rule(t, Rule::rbp), 1u);
}

// The vDSO as gp-record reads it: from its own address space, at AT_SYSINFO_EHDR.
TEST(UnwindOracle, VdsoImageAgreesWithElfutils) {
  const auto base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) GTEST_SKIP() << "no vDSO in this process";
  uint64_t size = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("[vdso]") == std::string::npos) continue;
    const uint64_t lo = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    const uint64_t hi = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (lo == base) size = hi - lo;
  }
  ASSERT_GT(size, 0u) << "the [vdso] mapping was not found in /proc/self/maps";
  const auto* image = reinterpret_cast<const uint8_t*>(base);
  auto t = gp::unwind::build_table(std::span<const uint8_t>(image, size));
  ASSERT_TRUE(t.ok()) << t.error().message;
  expect_invariants(*t);
  EXPECT_GE(t->stats.fdes, 2u);  // clock_gettime, gettimeofday, time, getcpu, ...
  ElfFile f(image, size);
  ASSERT_NE(f.elf(), nullptr);
  compare_with_elfutils(*t, f);
  const auto sym = f.symbol("__vdso_clock_gettime");
  ASSERT_TRUE(sym);
  EXPECT_EQ(row_at(*t, sym->first).rule, Rule::rsp);
  EXPECT_EQ(row_at(*t, sym->first).cfa_offset, 8);
}

}  // namespace
}  // namespace gp::test::unwind
