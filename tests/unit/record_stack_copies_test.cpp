// StackCopies: gp-record's copies of the stacks in a BPF stack map.
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
    copies.get(7, read, &end);
    EXPECT_EQ(end, 2);
    copies.get(8, read, &end);
    EXPECT_EQ(end, 1);
  }
  EXPECT_EQ(map.reads, 2);
  copies.get(0, read, &end);  // no stack: nothing to say
  EXPECT_EQ(end, 0);
}

TEST(StackCopies, AStackTheSamplerSentIsNotReadFromTheKernel) {
  FakeStackMap map;
  map.stacks[7] = {0x10, 0x20};
  map.stacks[8] = {0x30};
  StackCopies copies;
  auto read = map.reader();
  const std::vector<uint64_t> sent = {0x10, 0x20};
  copies.put(7, sent, 1);
  copies.put(0, sent, 1);  // no stack: ignored
  copies.put(9, {}, 1);    // nothing sent: ignored
  uint8_t end = 0;
  EXPECT_EQ(copies.get(7, read, &end), sent);
  EXPECT_EQ(end, 1);
  EXPECT_EQ(map.reads, 0);
  EXPECT_EQ(copies.get(8, read), (std::vector<uint64_t>{0x30}));  // not sent: read
  EXPECT_EQ(map.reads, 1);
  EXPECT_EQ(copies.map_entries(), 2u);  // both are in the map, to be deleted at its clear
  copies.clear();
  EXPECT_EQ(copies.get(7, read), sent);  // after a clear, read again (the map has it here)
  EXPECT_EQ(map.reads, 2);
}

TEST(StackCopies, ReadsAStackFromTheKernelOnceWhileItIsInUse) {
  FakeStackMap map;
  map.stacks[7] = {0x10, 0x20};
  StackCopies copies;
  auto read = map.reader();
  for (int drain = 0; drain < 300; ++drain) {
    EXPECT_EQ(copies.get(7, read), (std::vector<uint64_t>{0x10, 0x20}));
    copies.end_drain();
  }
  EXPECT_EQ(map.reads, 1);
  EXPECT_EQ(copies.map_entries(), 1u);
  EXPECT_TRUE(copies.get(0, read).empty());  // no stack
  EXPECT_EQ(map.reads, 1);
}

TEST(StackCopies, DropsCopiesUnusedForALongTimeButCountsWhatTheMapHolds) {
  FakeStackMap map;
  map.stacks[1] = {0x10};
  map.stacks[2] = {0x20};
  StackCopies copies;
  auto read = map.reader();
  // A stack of an exited process, then only the stacks of a live one.
  copies.get(1, read);
  for (uint32_t drain = 0; drain < 2 * StackCopies::kIdleDrains; ++drain) {
    copies.get(2, read);
    copies.end_drain();
  }
  EXPECT_EQ(copies.size(), 1u);         // stack 1's copy is gone, stack 2's stays
  EXPECT_EQ(copies.map_entries(), 2u);  // the kernel's map still holds both
  copies.get(1, read);                  // sampled again: read anew, still one entry of the map
  EXPECT_EQ(map.reads, 3);
  EXPECT_EQ(copies.map_entries(), 2u);
  EXPECT_EQ(copies.map_keys(), (std::unordered_set<uint64_t>{1, 2}));
  copies.clear();  // the map was cleared
  EXPECT_EQ(copies.size(), 0u);
  EXPECT_EQ(copies.map_entries(), 0u);
}

TEST(StackCopies, AKeyTheMapDoesNotHoldIsNoneOfItsKeys) {
  FakeStackMap map;
  map.stacks[5] = {0x50};
  StackCopies copies;
  auto read = map.reader();
  EXPECT_TRUE(copies.get(6, read).empty());  // lost (the map was full): nothing to delete later
  copies.get(5, read);
  EXPECT_EQ(copies.map_keys(), (std::unordered_set<uint64_t>{5}));
}

}  // namespace
}  // namespace gp::test::record
