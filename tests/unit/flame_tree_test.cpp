#include "gp/flame/tree.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gp::test::flame {
namespace {

using gp::flame::FlameTree;
using model::FrameKind;

fold::FoldedStack stack(std::initializer_list<const char*> frames, uint64_t count,
                        FrameKind kind = FrameKind::native) {
  fold::FoldedStack s;
  for (const char* f : frames) s.frames.push_back({f, kind});
  s.count = count;
  return s;
}

// "name@depth=total" per node in preorder, a compact picture of the tree.
std::string shape(const FlameTree& tree, bool base = false) {
  std::ostringstream out;
  for (const auto& n : tree.nodes) {
    out << tree.labels[n.label].name << '@' << n.depth << '=' << (base ? n.base_total : n.total)
        << ' ';
  }
  return out.str();
}

TEST(FlameTree, MergesSharedPrefixesAndSortsChildrenByName) {
  auto tree = gp::flame::build_tree({stack({"main", "zeta"}, 2), stack({"main", "alpha", "x"}, 3),
                                     stack({"main", "alpha"}, 1), stack({"other"}, 4)});
  EXPECT_EQ(shape(tree), "root@0=10 main@1=6 alpha@2=4 x@3=3 zeta@2=2 other@1=4 ");
  EXPECT_EQ(tree.total(), 10u);
}

TEST(FlameTree, SumsDuplicateStacksAndIgnoresZeroCounts) {
  auto tree =
      gp::flame::build_tree({stack({"a", "b"}, 2), stack({"a", "b"}, 5), stack({"a", "c"}, 0)});
  EXPECT_EQ(shape(tree), "root@0=7 a@1=7 b@2=7 ");
}

TEST(FlameTree, SameNameWithDifferentKindsStaysApart) {
  auto tree = gp::flame::build_tree(
      {stack({"f"}, 1, FrameKind::kernel), stack({"f"}, 2, FrameKind::native)});
  ASSERT_EQ(tree.nodes.size(), 3u);
  EXPECT_EQ(tree.labels[tree.nodes[1].label].kind,
            FrameKind::native);  // enum order: native < kernel
  EXPECT_EQ(tree.labels[tree.nodes[2].label].kind, FrameKind::kernel);
  EXPECT_EQ(tree.labels.size(), 3u);  // root + two labels
}

TEST(FlameTree, InputOrderDoesNotMatter) {
  std::vector<fold::FoldedStack> stacks{stack({"b", "y"}, 1), stack({"a"}, 2),
                                        stack({"b", "x", "q"}, 3), stack({"b"}, 4),
                                        stack({"a", "z"}, 5)};
  auto first = gp::flame::build_tree(stacks);
  std::reverse(stacks.begin(), stacks.end());
  EXPECT_EQ(shape(gp::flame::build_tree(stacks)), shape(first));
}

TEST(FlameTree, NeighboursSharingPrefixesAcrossASkippedStackStayCorrect) {
  // Sorted input as fold_stacks gives it, with a zero-count stack between two neighbours.
  auto kernel_x = stack({"a", "x"}, 1);
  kernel_x.frames[1].kind = FrameKind::kernel;
  auto tree = gp::flame::build_tree({stack({"a", "b", "c"}, 1), stack({"a", "b", "d"}, 0),
                                     stack({"a", "b", "e"}, 2), stack({"a", "x"}, 3), kernel_x});
  EXPECT_EQ(shape(tree), "root@0=7 a@1=7 b@2=3 c@3=1 e@3=2 x@2=3 x@2=1 ");
  EXPECT_EQ(tree.labels[tree.nodes.back().label].kind, FrameKind::kernel);
}

TEST(FlameTree, JavaSignaturesGetTheirSemicolonsBack) {
  auto tree = gp::flame::build_tree({stack({"Foo.bar(Ljava/lang/String|)V"}, 1, FrameKind::java),
                                     stack({"a|b"}, 1, FrameKind::native)});
  EXPECT_EQ(shape(tree), "root@0=2 Foo.bar(Ljava/lang/String;)V@1=1 a|b@1=1 ");
}

TEST(FlameTree, EmptyInputGivesARootWithoutSamples) {
  auto tree = gp::flame::build_tree({});
  EXPECT_EQ(shape(tree), "root@0=0 ");
}

TEST(FlameTreeDiff, BaseCountsFollowThePathsOfTheNewProfile) {
  auto tree = gp::flame::build_tree({stack({"main", "grow"}, 8), stack({"main", "shrink"}, 2)});
  gp::flame::add_base(tree, {stack({"main", "grow"}, 2), stack({"main", "shrink"}, 6),
                             stack({"main", "gone"}, 3), stack({"elsewhere", "x"}, 1)});
  EXPECT_TRUE(tree.differential);
  EXPECT_EQ(shape(tree), "root@0=10 main@1=10 grow@2=8 shrink@2=2 ");
  // "gone" exists only in the base: counted in main and root, but not drawn.
  EXPECT_EQ(shape(tree, true), "root@0=12 main@1=11 grow@2=2 shrink@2=6 ");
}

TEST(FlameTreeDiff, MatchesByKindToo) {
  auto tree = gp::flame::build_tree({stack({"f"}, 1, FrameKind::kernel)});
  gp::flame::add_base(tree, {stack({"f"}, 5, FrameKind::native)});
  EXPECT_EQ(shape(tree, true), "root@0=5 f@1=0 ");
}

TEST(FlameTreePrune, DropsNarrowSubtreesAndUnusedLabels) {
  auto tree = gp::flame::build_tree(
      {stack({"big", "inner"}, 95), stack({"small", "deep"}, 4), stack({"big", "tiny"}, 1)});
  gp::flame::prune(tree, 0.05);
  EXPECT_EQ(shape(tree), "root@0=100 big@1=96 inner@2=95 ");
  EXPECT_EQ(tree.labels.size(), 3u);
  for (const auto& n : tree.nodes) EXPECT_LT(n.label, tree.labels.size());
}

TEST(FlameTreePrune, ZeroFractionKeepsEverything) {
  auto tree = gp::flame::build_tree({stack({"a"}, 1), stack({"b"}, 1000)});
  gp::flame::prune(tree, 0);
  EXPECT_EQ(tree.nodes.size(), 3u);
}

}  // namespace
}  // namespace gp::test::flame
