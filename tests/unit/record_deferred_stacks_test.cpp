// DeferredStacks: a copied sample is unwound with its process's tables as soon as they are there
// (on arrival, after a load, before the process goes), handed to the drain of its own slot, and
// walked with frame pointers only when no tables came in time, counted as such.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "gp/record/deferred_stacks.h"

namespace gp::test::record {
namespace {

using gp::record::DeferredStacks;
using gp::record::StackCopySample;
using gp::unwind::WalkEnd;

constexpr uint64_t S = 0x7ffd00000000;

// A stack of one frame-pointer frame: rbp = S, {0, 0x1234} at S (a zero saved rbp ends it).
StackCopySample copy_of(int32_t pid, uint32_t slot) {
  StackCopySample c;
  c.pid = pid;
  c.tid = pid;
  c.comm = "t";
  c.slot = slot;
  c.regs = {0x1000, S, S};
  c.stack_start = S;
  uint64_t words[2] = {0, 0x1234};
  c.stack.resize(sizeof(words));
  std::memcpy(c.stack.data(), words, sizeof(words));
  return c;
}

// Tables for the pids in `loaded`: walks that reach the outermost frame, or (for the pids in
// `partial`: a library's table missing) stop short of it, or (in `zero_end`) end at a zero frame
// pointer after a frame-pointer step at an address without a table, or (in `gap_end`) in a gap
// of a table (ld.so's entry point).
struct FakeTables {
  std::set<int32_t> loaded, partial, zero_end, gap_end;
  DeferredStacks::Unwind unwind() {
    return [this](int32_t pid, const gp::unwind::UserRegisters& regs, const gp::unwind::StackCopy&,
                  bool) -> std::optional<gp::unwind::WalkedStack> {
      if (loaded.count(pid) == 0) return std::nullopt;
      gp::unwind::WalkedStack w;
      w.frames = {regs.rip, 0x2000};
      w.end = partial.count(pid) ? WalkEnd::truncated : WalkEnd::complete;
      w.stop = partial.count(pid) ? gp::unwind::WalkStop::no_rule : gp::unwind::WalkStop::complete;
      if (zero_end.count(pid) || gap_end.count(pid)) {
        w.end = WalkEnd::unknown;
        w.stop = gp::unwind::WalkStop::unknown_end;
        w.fp_frames = 1;
      }
      w.untabled_frames = partial.count(pid) || zero_end.count(pid) ? 1 : 0;
      return w;
    };
  }
};

TEST(DeferredStacks, UnwindsACopyWhoseTablesAreLoadedAtOnce) {
  FakeTables tables;
  tables.loaded = {7};
  DeferredStacks d(tables.unwind());
  d.add(copy_of(7, 1));
  EXPECT_FALSE(d.waiting(1));
  EXPECT_TRUE(d.take(0).empty());
  auto got = d.take(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].with_tables);
  EXPECT_EQ(got[0].user.frames, (std::vector<uint64_t>{0x1000, 0x2000}));
  EXPECT_EQ(got[0].user.end, WalkEnd::complete);
  EXPECT_EQ(d.stats().complete, 1u);
  EXPECT_EQ(d.stats().received, 1u);
  EXPECT_EQ(d.stats().bytes, 16u);
  EXPECT_TRUE(d.take(1).empty());  // handed over once
}

TEST(DeferredStacks, ACopysPythonFramesGoWithItsUnwoundStack) {
  FakeTables tables;
  DeferredStacks d(tables.unwind());
  StackCopySample c = copy_of(7, 0);
  c.python = {0xfffe000000000001ULL, (1ULL << 63) | 0x7f0000001000ULL};
  d.add(std::move(c));  // waits for its tables: the frames wait with it
  tables.loaded = {7};
  d.tables_changed(7);
  auto got = d.take(0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].user.frames, (std::vector<uint64_t>{0x1000, 0x2000}));
  EXPECT_EQ(got[0].python,
            (std::vector<uint64_t>{0xfffe000000000001ULL, (1ULL << 63) | 0x7f0000001000ULL}));
}

TEST(DeferredStacks, ACopyWaitsForItsProcesssTables) {
  FakeTables tables;
  DeferredStacks d(tables.unwind());
  d.add(copy_of(7, 0));
  d.add(copy_of(7, 1));
  EXPECT_TRUE(d.waiting(0));
  tables.loaded = {7};
  d.tables_changed(7);
  EXPECT_FALSE(d.waiting(0));
  EXPECT_FALSE(d.waiting(1));
  EXPECT_EQ(d.take(0).size(), 1u);
  EXPECT_EQ(d.stats().unwound, 2u);
  EXPECT_EQ(d.stats().without_tables, 0u);
}

TEST(DeferredStacks, AWalkCutShortWaitsForALaterLoadUntilItsDrain) {
  FakeTables tables;
  tables.loaded = {7};
  tables.partial = {7};
  DeferredStacks d(tables.unwind());
  d.add(copy_of(7, 0));
  EXPECT_TRUE(d.waiting(0));
  tables.partial.clear();  // a follow-up read of its mappings loaded the missing table
  d.tables_changed(7);
  EXPECT_FALSE(d.waiting(0));
  auto got = d.take(0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].user.end, WalkEnd::complete);
  // Cut short until its drain: then it goes as it is, truncated.
  tables.partial = {7};
  d.add(copy_of(7, 1));
  auto cut = d.take(1);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_TRUE(cut[0].with_tables);
  EXPECT_EQ(cut[0].user.end, WalkEnd::truncated);
  EXPECT_EQ(d.stats().truncated, 1u);
}

TEST(DeferredStacks, WithoutTablesInTimeACopyIsWalkedWithFramePointersAndCounted) {
  FakeTables tables;
  DeferredStacks d(tables.unwind());
  d.add(copy_of(7, 0));
  d.add(copy_of(8, 1));
  auto drained = d.take(0);  // slot 0's drain: its copy cannot wait any longer
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_FALSE(drained[0].with_tables);
  EXPECT_EQ(drained[0].user.frames.size(), 2u);
  EXPECT_EQ(drained[0].user.end, WalkEnd::unknown);  // a chain of one record to a zero rbp
  EXPECT_TRUE(d.waiting(1));                         // the other slot's copy still waits
  d.process_gone(8);
  EXPECT_FALSE(d.waiting(1));
  auto gone = d.take(1);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_FALSE(gone[0].with_tables);
  // No frame record before the zero rbp (code without frame pointers): truncated, never a
  // one-frame stack that looks whole.
  auto leaf_only = copy_of(9, 0);
  leaf_only.regs.rbp = 0;
  d.add(leaf_only);
  auto cut = d.take(0);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].user.frames.size(), 1u);
  EXPECT_EQ(cut[0].user.end, WalkEnd::truncated);
  EXPECT_EQ(d.stats().without_tables, 3u);
}

TEST(DeferredStacks, ACopyWaitsOnForTheNextDrainUpToItsLimit) {
  FakeTables tables;
  DeferredStacks d(tables.unwind());
  d.add(copy_of(7, 0));
  auto old = copy_of(8, 0);
  old.received = std::chrono::steady_clock::now() - DeferredStacks::kMaxWait;
  d.add(old);
  // Slot 0's drain: the young copy goes on to slot 1's, the old one is walked as it can be.
  auto first = d.take(0, true);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].pid, 8);
  EXPECT_TRUE(d.waiting(1));
  tables.loaded = {7};
  d.tables_changed(7);
  auto next = d.take(1, true);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].pid, 7);
  EXPECT_EQ(next[0].user.end, WalkEnd::complete);
  EXPECT_EQ(d.stats().carried, 1u);
}

TEST(DeferredStacks, AfterAnExecOnlyTheOldImagesCopiesGoWithIt) {
  FakeTables tables;
  DeferredStacks d(tables.unwind());
  d.add(copy_of(7, 0));  // the shell's fork, before its exec
  d.image_replaced(7);
  d.add(copy_of(7, 0));      // the new image
  d.process_gone(7, false);  // the old image's tables go
  EXPECT_TRUE(d.waiting(0));
  tables.loaded = {7};
  d.tables_changed(7);  // the new image's are in
  auto got = d.take(0);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].with_tables + got[1].with_tables, 1);
  EXPECT_EQ(d.stats().without_tables, 1u);
  EXPECT_EQ(d.stats().complete, 1u);
}

TEST(DeferredStacks, ACopyOfAMappingWhoseTableNeverCameIsTruncated) {
  // The process has tables, but the BPF walk met a mapping without one (pending_mapping): a walk
  // of the copy that took frame-pointer steps there to a zero rbp is cut, not an unknown end.
  FakeTables tables;
  tables.loaded = {7};
  tables.zero_end = {7};
  DeferredStacks d(tables.unwind());
  auto pending = copy_of(7, 0);
  pending.pending_mapping = true;
  d.add(pending);
  EXPECT_TRUE(d.waiting(0));
  d.add(copy_of(7, 1));  // a copy taken before the process had tables: as the BPF walk ends
  auto cut = d.take(0);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_TRUE(cut[0].with_tables);
  EXPECT_EQ(cut[0].user.end, WalkEnd::truncated);
  auto other = d.take(1);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].user.end, WalkEnd::unknown);
  EXPECT_EQ(d.stats().pending_mapping, 1u);
  EXPECT_EQ(d.stats().truncated, 1u);
}

TEST(DeferredStacks, AWalkThatEndsInAGapOfItsTablesGoesAtOnceAsTheBpfWalkWouldEnd) {
  // Every frame had a table but the last, in a gap of one (ld.so's entry point, no FDE, rbp 0):
  // no later load changes the walk, so it neither waits nor, for a pending-mapping copy, is cut.
  FakeTables tables;
  tables.loaded = {7};
  tables.gap_end = {7};
  DeferredStacks d(tables.unwind());
  auto pending = copy_of(7, 0);
  pending.pending_mapping = true;
  d.add(pending);
  EXPECT_FALSE(d.waiting(0));
  auto got = d.take(0, true);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].with_tables);
  EXPECT_EQ(got[0].user.end, WalkEnd::unknown);
  EXPECT_EQ(d.stats().truncated, 0u);
  EXPECT_EQ(d.stats().carried, 0u);
}

}  // namespace
}  // namespace gp::test::record
