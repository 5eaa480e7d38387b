// gp-merge --smart: gProfiler's get_average_frame_count and the fp/dwarf choice per pid
// (reference/gprofiler.md §3.5).

#include <gtest/gtest.h>

#include "gp/merge/merge.h"
#include "gp/merge/smart.h"
#include "merge_fixture.h"

namespace gp::test::merge_smart {
namespace {

using namespace merge_fixture;
using model::SourceKind;
using Lines = std::vector<std::string>;

double average(const std::vector<std::string>& stacks) {
  model::Session s = session(SourceKind::system);
  model::SessionBuilder b(s);
  b.process(process(1, "comm"));
  for (const std::string& st : stacks) add(b, 1, st, 1);
  return gp::merge::average_frame_counts(s).at(1);
}

// Vectors in the spirit of test_perf.py::test_get_average_frame_count; the comm frame counts.
TEST(MergeSmart, AverageFrameCount) {
  EXPECT_DOUBLE_EQ(average({"a;b;c"}), 4.0);                  // comm;a;b;c, no kernel
  EXPECT_DOUBLE_EQ(average({"a;b;k1_[k];k2_[k]"}), 3.0);      // user part comm;a;b
  EXPECT_DOUBLE_EQ(average({"a;b;k1_[k]"}), 3.0);             // single kernel leaf
  EXPECT_DOUBLE_EQ(average({"[unknown];[unknown];a"}), 2.0);  // 4 frames - 2 unknown
  EXPECT_DOUBLE_EQ(average({"a", "a;b;c;d;e"}), (2.0 + 6.0) / 2);
  EXPECT_DOUBLE_EQ(average({"k_[k]"}), 1.0);            // only comm
  EXPECT_DOUBLE_EQ(average({"a;[unknown]_[k]"}), 2.0);  // kernel unknown ignored
  EXPECT_DOUBLE_EQ(average({"a;b", "x;y;z;w;k_[k]"}), (3.0 + 5.0) / 2);
}

TEST(MergeSmart, DistinctStacksAreUnweighted) {
  model::Session s = session(SourceKind::system);
  model::SessionBuilder b(s);
  add(b, 1, "a", 1000);
  add(b, 1, "a;b;c;d;e;f;g", 1);
  add(b, 1, "a", 5, 2);  // same stack, another thread: still one distinct stack
  EXPECT_DOUBLE_EQ(gp::merge::average_frame_counts(s).at(1), (2.0 + 8.0) / 2);
}

struct Pair {
  model::Session fp = session(SourceKind::system, "h1", "fp");
  model::Session dwarf = session(SourceKind::system, "h1", "dwarf");
};

Pair recording() {
  Pair p;
  model::SessionBuilder f(p.fp), d(p.dwarf);
  f.process(process(1, "shallow"));
  f.process(process(2, "deep"));
  add(f, 1, "[unknown];leaf", 100);  // fp lost the frames of pid 1
  add(f, 2, "main;a;b;c;leaf", 60);  // fp is deeper for pid 2
  add(f, 3, "only_fp", 40);
  d.process(process(1, "shallow"));
  add(d, 1, "_start;main;work;leaf", 50);
  add(d, 2, "main;leaf", 25);
  add(d, 4, "only_dwarf", 25);  // total dwarf = 100; ratio = 200 / 100 = 2
  return p;
}

TEST(MergeSmart, PerPidDeeperStacksWinDwarfScaledByGlobalRatio) {
  Pair p = recording();
  gp::merge::MergeStats stats;
  model::Session out = gp::merge::merge_smart(p.fp, p.dwarf, 1, stats);
  EXPECT_EQ(out.header.sampling.mode, "smart");
  EXPECT_EQ(folded(archive_of(out)), (Lines{"[pid 3];only_fp 40", "deep;main;a;b;c;leaf 60",
                                            "shallow;_start;main;work;leaf 100"}));
  EXPECT_EQ(stats.smart_pids_fp, 2u);
  EXPECT_EQ(stats.smart_pids_dwarf, 1u);
  EXPECT_EQ(stats.smart_pids_dropped, 1u);  // pid 4: dwarf only, dropped as gProfiler does
}

TEST(MergeSmart, EqualDepthTakesDwarf) {
  model::Session fp = session(SourceKind::system, "h1", "fp");
  model::Session dwarf = session(SourceKind::system, "h1", "dwarf");
  model::SessionBuilder f(fp), d(dwarf);
  add(f, 1, "a;b", 10);
  add(d, 1, "x;y", 10);
  gp::merge::MergeStats stats;
  EXPECT_EQ(folded(archive_of(gp::merge::merge_smart(fp, dwarf, 1, stats))),
            (Lines{"[pid 1];x;y 10"}));
}

TEST(MergeSmart, EmptySideGivesTheOther) {
  Pair p = recording();
  model::Session empty = session(SourceKind::system, "h1", "dwarf");
  gp::merge::MergeStats stats;
  EXPECT_EQ(folded(archive_of(gp::merge::merge_smart(p.fp, empty, 1, stats))),
            folded(archive_of(p.fp)));
}

TEST(MergeSmart, ThroughMergeArchivesInEitherOrder) {
  Pair a = recording(), b = recording();
  auto one = gp::merge::merge_archives({archive_of(a.fp), archive_of(a.dwarf)}, {.smart = true});
  auto two = gp::merge::merge_archives({archive_of(b.dwarf), archive_of(b.fp)}, {.smart = true});
  ASSERT_TRUE(one && two);
  ASSERT_EQ(one->sessions.size(), 1u);
  EXPECT_EQ(folded(*one), folded(*two));
}

TEST(MergeSmart, NeedsOneFpAndOneDwarf) {
  Pair p = recording();
  auto out = gp::merge::merge_archives({archive_of(p.fp)}, {.smart = true});
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("0 dwarf"), std::string::npos);
}

}  // namespace
}  // namespace gp::test::merge_smart
