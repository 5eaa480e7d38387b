// StackCopies: gp-record's copies of the stacks in its BPF sampler's two stack maps.
#include <gtest/gtest.h>

#include <map>

#include "gp/record/stack_copies.h"

namespace gp::test::record {
namespace {

using gp::record::StackCopies;

// A stack map stand-in that counts the reads.
struct FakeStackMap {
  std::map<uint64_t, std::vector<uint64_t>> stacks;
  std::map<uint64_t, uint8_t> ends;  // how each stack ended (bpf/profile.h: enum gp_stack_end)
  int reads = 0;
  StackCopies::Reader reader() {
    return [this](uint64_t key, std::vector<uint64_t>& ips, uint8_t& end) {
      ++reads;
      auto it = stacks.find(key);
      if (it != stacks.end()) ips = it->second;
      if (auto e = ends.find(key); e != ends.end()) end = e->second;
    };
  }
};

TEST(StackCopies, KeepsHowEachStackEndedWithItsCopy) {
  FakeStackMap map;
  map.stacks[7] = {0x10, 0x20};
  map.ends[7] = 2;  // truncated
  map.stacks[8] = {0x10};
  map.ends[8] = 1;  // complete
  StackCopies copies;
  auto read = map.reader();
  uint8_t end = 9;
  for (int drain = 0; drain < 3; ++drain) {  // read once, then from the copy
    copies.get(0, 7, read, &end);
    EXPECT_EQ(end, 2);
    copies.get(0, 8, read, &end);
    EXPECT_EQ(end, 1);
  }
  EXPECT_EQ(map.reads, 2);
  copies.get(0, 0, read, &end);  // no stack: nothing to say
  EXPECT_EQ(end, 0);
}

TEST(StackCopies, AStackTheSamplerSentIsNotReadFromTheKernel) {
  FakeStackMap map;
  map.stacks[7] = {0x10, 0x20};
  map.stacks[8] = {0x30};
  StackCopies copies;
  auto read = map.reader();
  const std::vector<uint64_t> sent = {0x10, 0x20};
  copies.put(0, 7, sent, 1);
  copies.put(0, 0, sent, 1);  // no stack: ignored
  copies.put(0, 9, {}, 1);    // nothing sent: ignored
  uint8_t end = 0;
  EXPECT_EQ(copies.get(0, 7, read, &end), sent);
  EXPECT_EQ(end, 1);
  EXPECT_EQ(map.reads, 0);
  EXPECT_EQ(copies.get(0, 8, read), (std::vector<uint64_t>{0x30}));  // not sent: read
  EXPECT_EQ(map.reads, 1);
  EXPECT_EQ(copies.map_keys(0), (std::vector<uint64_t>{7, 8}));  // deleted at the map's clear
  copies.map_cleared(0);
  EXPECT_EQ(copies.map_entries(0), 0u);
  EXPECT_EQ(copies.get(0, 7, read), sent);  // the copy stays: the same frames under the key
  EXPECT_EQ(map.reads, 1);
}

// The sampler stores a stack in each slot's map: both maps' keys name it, and it is copied once.
TEST(StackCopies, OneCopyServesBothMaps) {
  FakeStackMap maps[2];
  maps[1].stacks[8] = {0x30};
  StackCopies copies;
  const std::vector<uint64_t> sent = {0x10, 0x20};
  copies.put(0, 7, sent, 1);
  copies.put(1, 7, std::vector<uint64_t>{0x99}, 1);  // the same key: the copy is kept as it was
  EXPECT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies.get(1, 7, maps[1].reader()), sent);
  EXPECT_EQ(copies.get(1, 8, maps[1].reader()), (std::vector<uint64_t>{0x30}));
  EXPECT_EQ(copies.get(0, 8, maps[0].reader()), (std::vector<uint64_t>{0x30}));  // the copy
  EXPECT_EQ(maps[0].reads + maps[1].reads, 1);
  EXPECT_EQ(copies.map_keys(0), (std::vector<uint64_t>{7}));
  EXPECT_EQ(copies.map_keys(1), (std::vector<uint64_t>{7, 8}));
  copies.map_cleared(1);
  EXPECT_EQ(copies.map_keys(0), (std::vector<uint64_t>{7}));
  EXPECT_TRUE(copies.map_keys(1).empty());
}

TEST(StackCopies, ReadsAStackFromTheKernelOnceWhileItIsInUse) {
  FakeStackMap map;
  map.stacks[7] = {0x10, 0x20};
  StackCopies copies;
  auto read = map.reader();
  for (int drain = 0; drain < 300; ++drain) {
    EXPECT_EQ(copies.get(drain % 2, 7, read), (std::vector<uint64_t>{0x10, 0x20}));
    copies.end_drain();
  }
  EXPECT_EQ(map.reads, 1);
  EXPECT_EQ(copies.map_entries(0), 1u);
  EXPECT_TRUE(copies.get(0, 0, read).empty());  // no stack
  EXPECT_EQ(map.reads, 1);
}

TEST(StackCopies, DropsCopiesUnusedForALongTimeButKnowsWhatTheMapHolds) {
  FakeStackMap map;
  map.stacks[1] = {0x10};
  map.stacks[2] = {0x20};
  StackCopies copies;
  auto read = map.reader();
  // A stack of an exited process, then only the stacks of a live one.
  copies.get(0, 1, read);
  for (uint32_t drain = 0; drain < 2 * StackCopies::kIdleDrains; ++drain) {
    copies.get(0, 2, read);
    copies.end_drain();
  }
  EXPECT_EQ(copies.size(), 1u);  // stack 1's copy is gone, stack 2's stays
  EXPECT_EQ(copies.map_keys(0), (std::vector<uint64_t>{1, 2}));  // the map still holds both
  copies.get(0, 1, read);  // sampled again: read anew, still one key of the map
  EXPECT_EQ(map.reads, 3);
  EXPECT_EQ(copies.map_keys(0), (std::vector<uint64_t>{1, 2}));
  copies.map_cleared(0);
  EXPECT_EQ(copies.map_entries(0), 0u);
}

// A stack one map does not hold (lost when it was full) is none of its keys, and is not taken as
// missing from the other map.
TEST(StackCopies, AKeyAMapDoesNotHoldIsNoneOfItsKeys) {
  FakeStackMap maps[2];
  maps[0].stacks[5] = {0x50};
  maps[1].stacks[6] = {0x60};
  StackCopies copies;
  EXPECT_TRUE(copies.get(0, 6, maps[0].reader()).empty());
  copies.get(0, 5, maps[0].reader());
  EXPECT_EQ(copies.map_keys(0), (std::vector<uint64_t>{5}));
  EXPECT_EQ(copies.get(1, 6, maps[1].reader()), (std::vector<uint64_t>{0x60}));
  EXPECT_EQ(copies.map_keys(1), (std::vector<uint64_t>{6}));
}

}  // namespace
}  // namespace gp::test::record
