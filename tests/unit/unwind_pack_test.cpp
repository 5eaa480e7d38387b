// pack(): the rows and page directory the BPF walker reads. A lookup through the pages, done as
// the walker does it, must give the row the table holds at every address; offsets that do not
// fit the 8-byte row become unsupported; tables wider than 4 GiB are refused.

#include <random>
#include <string>

#include "unwind_support.h"

namespace gp::test::unwind {
namespace {

using gp::unwind::PackedRow;
using gp::unwind::PackedRule;
using gp::unwind::PackedTable;

void expect_lookups_match(const Table& t, const PackedTable& p, uint64_t samples) {
  ASSERT_FALSE(p.rows.empty());
  EXPECT_EQ(p.rows[0].pc, 0u);
  // Rules are distinct, and rows name them.
  for (size_t i = 0; i < p.rules.size(); ++i)
    for (size_t j = i + 1; j < p.rules.size(); ++j)
      ASSERT_FALSE(p.rules[i] == p.rules[j]) << i << " " << j;
  for (const PackedRow& r : p.rows) ASSERT_LT(r.rule, p.rules.size());
  EXPECT_EQ(p.base % 4096, 0u);
  for (size_t i = 0; i < p.pages.size(); ++i) {
    const auto& pg = p.pages[i];
    ASSERT_GE(pg.count, 1u);
    ASSERT_LE(uint64_t{pg.first_row} + pg.count, p.rows.size());
    // The rows after the first start in the page, in order.
    for (uint32_t k = pg.first_row + 2; k < pg.first_row + pg.count; ++k)
      ASSERT_LT(p.rows[k - 1].pc, p.rows[k].pc) << "page " << i;
  }
  const uint64_t lo = t.rows.front().address;
  const uint64_t hi = t.rows.back().address;
  std::mt19937_64 rng(42);
  auto check = [&](uint64_t a) {
    const Row want = row_at(t, a);
    const PackedRule* got = gp::unwind::packed_rule_at(p, a);
    ASSERT_NE(got, nullptr) << std::hex << a;
    ASSERT_EQ(got->kind, static_cast<uint8_t>(want.rule)) << std::hex << a;
    if (want.rule == Rule::rsp || want.rule == Rule::rbp || want.rule == Rule::plt) {
      ASSERT_EQ(got->cfa_offset, want.cfa_offset) << std::hex << a;
      ASSERT_EQ(got->rbp_offset * 8, want.rbp_offset) << std::hex << a;
    }
  };
  for (const Row& r : t.rows) {
    check(r.address);
    if (r.address > lo) check(r.address - 1);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (uint64_t i = 0; i < samples; ++i) {
    check(lo + rng() % (hi - lo + 1));
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(gp::unwind::packed_rule_at(p, p.base + p.pages.size() * 4096), nullptr);
}

TEST(UnwindPack, PageLookupsGiveTheTablesRows) {
  for (const std::string path : {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/xz",
                                 GP_UNWIND_EH_FRAME_FIXTURE, GP_UNWIND_DEBUG_FRAME_FIXTURE}) {
    if (!file_exists(path)) continue;
    ElfFile f(path);
    auto t = gp::unwind::build_table(f.fd());
    ASSERT_TRUE(t.ok()) << path;
    auto p = gp::unwind::pack(*t);
    ASSERT_TRUE(p.ok()) << path << ": " << p.error().message;
    SCOPED_TRACE(path);
    expect_lookups_match(*t, *p, 20000);
    EXPECT_EQ(p->pages.size(), ((t->rows.back().address - p->base) >> 12) + 1);
  }
}

TEST(UnwindPack, OffsetsThatDoNotFitBecomeUnsupported) {
  Table t;
  t.rows = {{0x1010, Rule::rsp, 8, 0},      {0x1020, Rule::rsp, 70000, 0},
            {0x1030, Rule::rbp, 16, -12},   {0x1040, Rule::rbp, -16, 0},
            {0x1050, Rule::rbp, 16, -2048}, {0x1060, Rule::rbp, 16, -1024},
            {0x1070, Rule::plt, 8, 0},      {0x1080, Rule::none, 0, 0}};
  auto p = gp::unwind::pack(t);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->base, 0x1000u);
  std::string kinds;
  for (const PackedRow& r : p->rows) {
    kinds += std::to_string(r.pc) + ":" +
             gp::unwind::rule_name(static_cast<Rule>(p->rules[r.rule].kind)) + " ";
  }
  // The three unsupported neighbours merge into one row.
  EXPECT_EQ(kinds, "0:none 16:rsp 32:unsupported 96:rbp 112:plt 128:none ");
  EXPECT_EQ(p->rules[p->rows[3].rule].rbp_offset, -128);
  ASSERT_EQ(p->pages.size(), 1u);
  EXPECT_EQ(p->pages[0].first_row, 0u);
  EXPECT_EQ(p->pages[0].count, p->rows.size());
}

TEST(UnwindPack, PagesSpanningRows) {
  // One rule across three pages, then a change inside the fourth.
  Table t;
  t.rows = {{0x10000, Rule::rsp, 8, 0}, {0x13800, Rule::rsp, 16, 0}, {0x13900, Rule::none, 0, 0}};
  auto p = gp::unwind::pack(t);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->pages.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p->pages[i].first_row, 0u);
    EXPECT_EQ(p->pages[i].count, 1u);
  }
  EXPECT_EQ(p->pages[3].first_row, 0u);
  EXPECT_EQ(p->pages[3].count, 3u);
}

TEST(UnwindPack, RefusesTablesWiderThan4GiB) {
  Table t;
  t.rows = {{0x1000, Rule::rsp, 8, 0}, {0x1000 + (uint64_t{1} << 32), Rule::none, 0, 0}};
  auto p = gp::unwind::pack(t);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("4 GiB"), std::string::npos);
  auto empty = gp::unwind::pack(Table{});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->rows.empty());
  EXPECT_TRUE(empty->pages.empty());
}

// build_packed (what gp-record loads) packs while it compiles, without a Table: it must give
// exactly what pack(build_table) gives, on Debian's binaries large and small.
TEST(UnwindPack, BuildPackedIsPackOfBuildTable) {
  int compared = 0;
  for (const std::string path :
       {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11", "/usr/bin/xz",
        "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", GP_UNWIND_EH_FRAME_FIXTURE,
        GP_UNWIND_DEBUG_FRAME_FIXTURE}) {
    if (!file_exists(path)) continue;
    SCOPED_TRACE(path);
    ElfFile f(path);
    auto t = gp::unwind::build_table(f.fd());
    ASSERT_TRUE(t.ok());
    auto want = gp::unwind::pack(*t);
    ASSERT_TRUE(want.ok());
    auto got = gp::unwind::build_packed(f.fd());
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(got->base, want->base);
    ASSERT_EQ(got->rows.size(), want->rows.size());
    for (size_t i = 0; i < got->rows.size(); ++i) {
      ASSERT_EQ(got->rows[i].pc, want->rows[i].pc) << i;
      ASSERT_EQ(got->rows[i].rule, want->rows[i].rule) << i;
    }
    ASSERT_EQ(got->pages.size(), want->pages.size());
    for (size_t i = 0; i < got->pages.size(); ++i) {
      ASSERT_EQ(got->pages[i].first_row, want->pages[i].first_row) << i;
      ASSERT_EQ(got->pages[i].count, want->pages[i].count) << i;
    }
    EXPECT_EQ(got->rules, want->rules);
    ++compared;
  }
  EXPECT_GE(compared, 2);
}

}  // namespace
}  // namespace gp::test::unwind
