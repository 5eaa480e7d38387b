// model::StringTable: interning keys, and a table emptied again and again (a sample index).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/model/string_table.h"

namespace gp::test::model {
namespace {

using gp::model::hash_bytes;
using gp::model::StringTable;

TEST(StringTable, FindsWhatWasInsertedAndNothingElse) {
  StringTable<int> t;
  EXPECT_EQ(t.find("a"), nullptr);
  t.insert("alpha", 1);
  t.insert("", 2);
  EXPECT_EQ(*t.find("alpha"), 1);
  EXPECT_EQ(*t.find(""), 2);
  EXPECT_EQ(t.find("alph"), nullptr);
  auto [v, inserted] = t.try_insert("alpha", 9);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*v, 1);
}

TEST(StringTable, AClearedTableForgetsItsKeysAndTakesNewOnesAcrossManyRounds) {
  StringTable<int> t;
  // Rounds alternate between a few keys (the kept slot array) and many (past it, past a block).
  for (int round = 0; round < 6; ++round) {
    const int n = round % 2 ? 20000 : 10;
    const std::string tag = "round" + std::to_string(round) + ":";
    for (int i = 0; i < n; ++i) t.insert(tag + std::to_string(i) + std::string(60, 'x'), i);
    ASSERT_EQ(t.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(*t.find(tag + std::to_string(i) + std::string(60, 'x')), i);
    t.clear();
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.find(tag + "0" + std::string(60, 'x')), nullptr);
  }
  t.insert(std::string(600000, 'k'), 5);  // a key of its own block
  t.clear();
  t.insert("after", 6);
  EXPECT_EQ(*t.find("after"), 6);
  EXPECT_EQ(t.find(std::string(600000, 'k')), nullptr);
}

TEST(StringTable, KeepsEveryKeyIntactAcrossBlocksOfGrowingSize) {
  // Keys start in a small block and move to ever larger ones; some are larger than the first
  // blocks (up to the largest key that still shares a block). Each key's bytes are its own, so
  // an overlap or a cut copy changes what find() matches.
  StringTable<size_t> t;
  std::vector<std::string> keys;
  const size_t lengths[] = {1, 100, 4000, 4097, 9000, 30000, 100000, 262144, 7, 262144, 50};
  for (size_t round = 0; round < 40; ++round) {
    for (size_t len : lengths) {
      std::string key(len, static_cast<char>('a' + keys.size() % 26));
      key.replace(0, std::min<size_t>(len, 8), std::to_string(keys.size()).substr(0, len));
      if (t.find(key)) continue;
      t.insert(key, keys.size());
      keys.push_back(std::move(key));
    }
  }
  ASSERT_EQ(t.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(*t.find(keys[i]), i) << "key " << i;
}

// A slot keeps 32 bits of its key's hash: keys whose hashes agree in those bits (two among 200k
// numbers, found here) are still told apart by their bytes, and each finds its own value.
TEST(StringTable, TellsApartKeysWhoseHashesShareTheirLow32Bits) {
  std::vector<std::string> keys;
  std::unordered_map<uint32_t, size_t> seen;  // low 32 bits of the hash -> key
  std::pair<size_t, size_t> same{0, 0};
  for (size_t i = 0; i < 400000 && same.first == same.second; ++i) {
    keys.push_back("key " + std::to_string(i));
    auto [it, fresh] = seen.try_emplace(static_cast<uint32_t>(hash_bytes(keys.back())), i);
    if (!fresh) same = {it->second, i};
  }
  ASSERT_NE(same.first, same.second) << "no two keys share the low 32 bits of their hash";
  ASSERT_NE(hash_bytes(keys[same.first]), hash_bytes(keys[same.second]));
  StringTable<uint64_t> t;
  for (size_t i = 0; i < keys.size(); ++i) t.insert(keys[i], i);
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(*t.find(keys[i]), i) << keys[i];
  EXPECT_EQ(*t.find(keys[same.first]), same.first);
  EXPECT_EQ(*t.find(keys[same.second]), same.second);
  EXPECT_EQ(t.find("key -1"), nullptr);
}

}  // namespace
}  // namespace gp::test::model
