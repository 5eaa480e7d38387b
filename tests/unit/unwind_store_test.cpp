// TableStore: tables shared by key, placed in fixed arrays, evicted only when unused and room is
// needed, never written past the arrays.
#include <gtest/gtest.h>

#include <vector>

#include "gp/unwind/table_store.h"
#include "unwind_memory.h"

namespace gp::test::unwind {
namespace {

using gp::unwind::LoadedBinary;
using gp::unwind::PackedPage;
using gp::unwind::PackedRow;
using gp::unwind::PackedRule;
using gp::unwind::StoreLimits;
using gp::unwind::TableSlot;
using gp::unwind::TableStore;

// A table of n rows whose pcs are tag, tag + 1, ... (so where it landed can be checked), with
// rules of CFA offsets 8 and 16 in turn.
LoadedBinary table_of(uint32_t n, uint32_t tag) {
  LoadedBinary b;
  b.table.base = 0x1000;
  b.table.rules = {PackedRule{8, 1, 0}, PackedRule{16, 1, 0}};
  for (uint32_t i = 0; i < n; ++i)
    b.table.rows.push_back(PackedRow{static_cast<uint16_t>(tag + i), static_cast<uint16_t>(i % 2)});
  b.table.pages.push_back(PackedPage{0, n});
  b.segments.push_back({0, 0, 0x10000});
  return b;
}

TableStore::Builder builder(uint32_t n, uint32_t tag, int* builds) {
  return [=]() -> Result<LoadedBinary> {
    ++*builds;
    return table_of(n, tag);
  };
}

TEST(TableStore, BuildsATableOnceForEveryProcessThatMapsIt) {
  StoreLimits limits{100, 10, 4};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  int builds = 0;
  auto a = store.acquire("libc", builder(10, 500, &builds));
  auto b = store.acquire("libc", builder(10, 500, &builds));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(a->slot, b->slot);
  EXPECT_EQ(a->info->base, 0x1000u);
  const TableSlot& where = mem.slots[a->slot];
  EXPECT_EQ(where.row_count, 10u);
  EXPECT_EQ(mem.rows[where.row_base].pc, 500u);
  EXPECT_EQ(mem.rows[where.row_base + 9].pc, 509u);
  EXPECT_EQ(store.stats().rows_used, 10u);
}

TEST(TableStore, KeepsAnUnusedTableUntilItsRoomIsNeeded) {
  StoreLimits limits{30, 10, 8};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  int builds = 0;
  auto a = store.acquire("a", builder(10, 100, &builds));
  ASSERT_TRUE(a);
  store.release(a->slot);
  // Used again while still loaded: not built again.
  ASSERT_TRUE(store.acquire("a", builder(10, 100, &builds)));
  EXPECT_EQ(builds, 1);
  store.release(a->slot);
  ASSERT_TRUE(store.acquire("b", builder(10, 200, &builds)));
  ASSERT_TRUE(store.acquire("c", builder(10, 300, &builds)));
  EXPECT_EQ(store.stats().evicted, 0u);
  // The arrays are full: "d" takes the room of the unused "a", not of the used "b" or "c".
  auto d = store.acquire("d", builder(10, 400, &builds));
  ASSERT_TRUE(d);
  EXPECT_EQ(store.stats().evicted, 1u);
  EXPECT_EQ(mem.rows[mem.slots[d->slot].row_base].pc, 400u);
  ASSERT_FALSE(store.acquire("a", builder(10, 100, &builds)));  // no room now
  EXPECT_EQ(builds, 5);
}

TEST(TableStore, EvictsTheLeastRecentlyUsedUnusedTableFirst) {
  StoreLimits limits{30, 10, 8};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  int builds = 0;
  auto a = store.acquire("a", builder(10, 100, &builds));
  auto b = store.acquire("b", builder(10, 200, &builds));
  auto c = store.acquire("c", builder(10, 300, &builds));
  store.release(b->slot);  // b unused first, then a
  store.release(a->slot);
  ASSERT_TRUE(store.acquire("d", builder(10, 400, &builds)));
  builds = 0;
  ASSERT_TRUE(store.acquire("a", builder(10, 100, &builds)));  // still loaded
  EXPECT_EQ(builds, 0);
  ASSERT_FALSE(store.acquire("b", builder(10, 200, &builds)));  // was evicted; no room to reload
  EXPECT_EQ(builds, 1);
  (void)c;
}

TEST(TableStore, NeverWritesPastTheArrays) {
  StoreLimits limits{25, 10, 8};
  ArrayMemory mem(limits);  // asserts every write's bounds
  TableStore store(mem, limits);
  int builds = 0;
  EXPECT_FALSE(store.acquire("huge", builder(26, 1, &builds)));
  ASSERT_TRUE(store.acquire("a", builder(20, 1, &builds)));
  auto b = store.acquire("b", builder(10, 1, &builds));  // a is in use: no room
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("--unwind-memory"), std::string::npos);
  EXPECT_EQ(store.stats().no_room, 2u);
  EXPECT_EQ(store.stats().rows_used, 20u);
}

TEST(TableStore, MergesFreedRoomSoALargerTableFits) {
  StoreLimits limits{30, 10, 8};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  int builds = 0;
  auto a = store.acquire("a", builder(10, 1, &builds));
  auto b = store.acquire("b", builder(10, 1, &builds));
  auto c = store.acquire("c", builder(10, 1, &builds));
  store.release(a->slot);
  store.release(b->slot);
  // 20 rows fit only in the room of a and b together.
  auto d = store.acquire("d", builder(20, 7, &builds));
  ASSERT_TRUE(d);
  EXPECT_EQ(mem.slots[d->slot].row_base, 0u);
  EXPECT_EQ(mem.rows[19].pc, 26u);
  (void)c;
}

TEST(TableStore, RemembersABinaryWithoutATable) {
  StoreLimits limits{30, 10, 8};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  int builds = 0;
  auto fail = [&]() -> Result<LoadedBinary> {
    ++builds;
    return make_error("no call-frame information");
  };
  EXPECT_FALSE(store.acquire("static", fail));
  auto again = store.acquire("static", fail);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, "no call-frame information");
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(store.stats().failed, 1u);
}

TEST(TableStore, SharesEachRuleOnceAcrossTables) {
  StoreLimits limits{100, 10, 8, 3};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  int builds = 0;
  auto a = store.acquire("a", builder(10, 100, &builds));
  auto b = store.acquire("b", builder(10, 200, &builds));
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(store.stats().rules, 2u);
  // Rows name the shared rules: b's rows hold the same two as a's.
  for (uint32_t i = 0; i < 10; ++i) {
    const PackedRow& ra = mem.rows[mem.slots[a->slot].row_base + i];
    const PackedRow& rb = mem.rows[mem.slots[b->slot].row_base + i];
    EXPECT_EQ(mem.rules[ra.rule].cfa_offset, i % 2 ? 16 : 8);
    EXPECT_EQ(ra.rule, rb.rule);
  }
  // Two new rules do not fit the three places: refused, and nothing of it is loaded.
  auto more = [&]() -> Result<LoadedBinary> {
    LoadedBinary t = table_of(4, 300);
    t.table.rules = {PackedRule{24, 1, 0}, PackedRule{32, 1, 0}};
    return t;
  };
  auto c = store.acquire("c", more);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("rules"), std::string::npos);
  EXPECT_EQ(store.stats().tables, 2u);
}

}  // namespace
}  // namespace gp::test::unwind
