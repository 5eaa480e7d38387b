// util::PairMap: finding and inserting pairs of integers (128-bit second halves included), growth
// from a small first size, and a map emptied and refilled (a process's known stacks after a
// change of its mappings).
#include <gtest/gtest.h>

#include <cstdint>

#include "gp/util/pair_map.h"

namespace gp::test::util {
namespace {

using gp::util::PairMap;
using Wide = unsigned __int128;

Wide wide(uint64_t high, uint64_t low) { return static_cast<Wide>(high) << 64 | low; }

TEST(PairMap, FindsWhatWasInsertedAndNothingElse) {
  PairMap<uint64_t, int> m;
  EXPECT_EQ(m.find(1, 2), nullptr);  // empty: no slots yet
  EXPECT_TRUE(m.try_insert(1, 2, 10).second);
  EXPECT_EQ(*m.find(1, 2), 10);
  EXPECT_EQ(m.find(2, 1), nullptr);
  EXPECT_EQ(m.find(1, 3), nullptr);
  auto [v, inserted] = m.try_insert(1, 2, 99);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*v, 10);
}

TEST(PairMap, TellsApartKeysThatDifferOnlyInTheHighHalfOfAWideSecondPart) {
  // The recorder's known stacks: (user key, end << 64 | kernel key); the same frames once
  // complete and once cut are two stacks.
  PairMap<Wide, int> m(16);
  m.try_insert(7, wide(1, 5), 1);
  m.try_insert(7, wide(2, 5), 2);
  m.try_insert(7, wide(0, 5), 3);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(*m.find(7, wide(1, 5)), 1);
  EXPECT_EQ(*m.find(7, wide(2, 5)), 2);
  EXPECT_EQ(*m.find(7, wide(0, 5)), 3);
  EXPECT_EQ(m.find(7, wide(3, 5)), nullptr);
}

TEST(PairMap, GrowsFromASmallFirstSizeKeepingEveryEntry) {
  PairMap<uint64_t, uint64_t> m(16);
  for (uint64_t i = 0; i < 5000; ++i) m.try_insert(i * 0x9e3779b97f4a7c15ull, i, i + 1);
  EXPECT_EQ(m.size(), 5000u);
  for (uint64_t i = 0; i < 5000; ++i) {
    const uint64_t* v = m.find(i * 0x9e3779b97f4a7c15ull, i);
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, i + 1);
  }
}

TEST(PairMap, AClearedMapForgetsItsKeysAndTakesNewOnes) {
  PairMap<uint64_t, int> m(16);
  for (int round = 0; round < 3; ++round) {
    for (uint64_t i = 0; i < 100; ++i) m.try_insert(i + round * 1000, i, round);
    EXPECT_EQ(m.size(), 100u);
    EXPECT_EQ(*m.find(50 + round * 1000, 50), round);
    if (round > 0) {
      EXPECT_EQ(m.find(50 + (round - 1) * 1000, 50), nullptr);
    }
    m.clear();
    EXPECT_EQ(m.size(), 0u);
    EXPECT_EQ(m.find(50 + round * 1000, 50), nullptr);
  }
}

}  // namespace
}  // namespace gp::test::util
