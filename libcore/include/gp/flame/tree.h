#pragma once
// The call tree behind a flamegraph: folded stacks merged by identical prefixes, stored in
// preorder so the page can walk a subtree as one index range and skip it in one step.

#include <cstdint>
#include <string>
#include <vector>

#include "gp/fold/stacks.h"
#include "gp/model/session.h"

namespace gp::flame {

// One distinct frame label: the tree stores indexes into a table of these, so a name that
// appears under many parents is written to the page once.
struct FrameLabel {
  std::string name;
  model::FrameKind kind = model::FrameKind::unknown;
  bool operator==(const FrameLabel&) const = default;
};

struct Node {
  uint32_t label = 0;       // index into FlameTree::labels; the root's label is "root"
  uint32_t depth = 0;       // root = 0
  uint64_t total = 0;       // samples of every stack passing through this node
  uint64_t base_total = 0;  // the same in the base profile (differential trees only)
};

// Invariants: nodes[0] is the root; nodes are in preorder; the children of a node follow it
// consecutively, sorted by (name, kind), so equal inputs always give equal trees.
// A node's total is at least the sum of its children's totals (the rest is its self time,
// or children pruned away).
struct FlameTree {
  std::vector<FrameLabel> labels;
  std::vector<Node> nodes;
  bool differential = false;

  uint64_t total() const { return nodes.empty() ? 0 : nodes[0].total; }
  uint64_t base_total() const { return nodes.empty() ? 0 : nodes[0].base_total; }
};

// Builds the tree of `stacks` (any order; duplicates are summed; zero counts ignored).
// Java frames get gProfiler's `|` -> `;` signature substitution undone, as its flamegraph
// converter does.
FlameTree build_tree(const std::vector<fold::FoldedStack>& stacks);

// Makes `tree` differential: each node's base_total becomes the base samples whose stack
// passes through the same path. Paths that exist only in the base are not added (the
// picture keeps the new profile's shape), but their samples still count in the base total.
void add_base(FlameTree& tree, const std::vector<fold::FoldedStack>& base);

// Drops every subtree whose total is below `min_fraction` of the root's total (the page's
// --min-width at a reference width). Their samples stay in their parent's total.
// Labels no longer used are removed.
void prune(FlameTree& tree, double min_fraction);

}  // namespace gp::flame
