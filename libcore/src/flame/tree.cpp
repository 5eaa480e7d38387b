#include "gp/flame/tree.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace gp::flame {
namespace {

constexpr std::string_view kRootName = "root";

// gProfiler's async-profiler fork writes `;` inside JVM signatures as `|` (a `;` would split
// the folded line); its flamegraph converter turns them back, and so do we. Returns `name`
// itself when nothing changes, else the fixed copy kept in `scratch`.
std::string_view display_name(const fold::Frame& frame, std::string& scratch) {
  if (frame.kind != model::FrameKind::java || frame.name.find('|') == std::string::npos)
    return frame.name;
  scratch = frame.name;
  std::replace(scratch.begin(), scratch.end(), '|', ';');
  return scratch;
}

struct LabelRef {
  std::string_view name;
  model::FrameKind kind;
  bool operator==(const LabelRef&) const = default;
};
struct LabelRefHash {
  size_t operator()(const LabelRef& ref) const {
    return std::hash<std::string_view>{}(ref.name) * 31 + static_cast<size_t>(ref.kind);
  }
};

// Interns labels without building a key string per frame: the map's keys view the names
// kept in a deque (stable addresses), moved into the tree at the end.
class LabelTable {
 public:
  uint32_t intern(std::string_view name, model::FrameKind kind) {
    if (auto it = ids_.find(LabelRef{name, kind}); it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(labels_.size());
    labels_.push_back(FrameLabel{std::string(name), kind});
    ids_.emplace(LabelRef{labels_.back().name, kind}, id);
    return id;
  }
  const FrameLabel& operator[](uint32_t id) const { return labels_[id]; }
  size_t size() const { return labels_.size(); }
  std::vector<FrameLabel> take() {
    ids_.clear();
    return {std::make_move_iterator(labels_.begin()), std::make_move_iterator(labels_.end())};
  }

 private:
  std::unordered_map<LabelRef, uint32_t, LabelRefHash> ids_;
  std::deque<FrameLabel> labels_;
};

// Rank of each label in (name, kind) order: children are sorted by it.
std::vector<uint32_t> label_ranks(const LabelTable& labels) {
  std::vector<uint32_t> order(labels.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (labels[a].name != labels[b].name) return labels[a].name < labels[b].name;
    return labels[a].kind < labels[b].kind;
  });
  std::vector<uint32_t> rank(labels.size());
  for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  return rank;
}

}  // namespace

FlameTree build_tree(const std::vector<fold::FoldedStack>& stacks) {
  LabelTable table;
  table.intern(kRootName, model::FrameKind::pseudo);
  std::string scratch;
  std::vector<std::vector<uint32_t>> paths;
  std::vector<uint64_t> counts;
  const fold::FoldedStack* previous = nullptr;
  for (const auto& stack : stacks) {
    if (stack.count == 0) continue;
    std::vector<uint32_t> path;
    path.reserve(stack.frames.size());
    // fold_stacks' output is sorted, so neighbours share prefixes: reuse their label ids
    // (a string compare) before hashing.
    size_t shared = 0;
    if (previous != nullptr) {
      const auto& before = previous->frames;
      while (shared < stack.frames.size() && shared < before.size() &&
             stack.frames[shared].kind == before[shared].kind &&
             stack.frames[shared].name == before[shared].name)
        ++shared;
      path.assign(paths.back().begin(), paths.back().begin() + static_cast<std::ptrdiff_t>(shared));
    }
    for (size_t k = shared; k < stack.frames.size(); ++k)
      path.push_back(table.intern(display_name(stack.frames[k], scratch), stack.frames[k].kind));
    paths.push_back(std::move(path));
    counts.push_back(stack.count);
    previous = &stack;
  }
  const auto rank = label_ranks(table);
  std::vector<size_t> order(paths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Lexicographic order by rank puts every prefix before its extensions and keeps stacks
  // that share a prefix together, so one pass along the sorted list builds the preorder.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::lexicographical_compare(paths[a].begin(), paths[a].end(), paths[b].begin(),
                                        paths[b].end(),
                                        [&](uint32_t x, uint32_t y) { return rank[x] < rank[y]; });
  });

  FlameTree tree;
  tree.nodes.push_back(Node{0, 0, 0, 0});
  std::vector<size_t> open{0};  // node indexes of the current path, root first
  for (size_t index : order) {
    const auto& path = paths[index];
    size_t common = 0;
    while (common < path.size() && common + 1 < open.size() &&
           tree.nodes[open[common + 1]].label == path[common])
      ++common;
    open.resize(common + 1);
    for (size_t k = common; k < path.size(); ++k) {
      open.push_back(tree.nodes.size());
      tree.nodes.push_back(Node{path[k], static_cast<uint32_t>(k + 1), 0, 0});
    }
    for (size_t node : open) tree.nodes[node].total += counts[index];
  }
  tree.labels = table.take();
  return tree;
}

void add_base(FlameTree& tree, const std::vector<fold::FoldedStack>& base) {
  tree.differential = true;
  std::unordered_map<LabelRef, uint32_t, LabelRefHash> label_ids;
  for (uint32_t i = 0; i < tree.labels.size(); ++i)
    label_ids.emplace(LabelRef{tree.labels[i].name, tree.labels[i].kind}, i);
  std::string scratch;
  // (parent node << 32 | label) -> child node
  std::unordered_map<uint64_t, uint32_t> children;
  std::vector<uint32_t> open{0};
  for (uint32_t i = 1; i < tree.nodes.size(); ++i) {
    open.resize(tree.nodes[i].depth);
    children.emplace(uint64_t{open.back()} << 32 | tree.nodes[i].label, i);
    open.push_back(i);
  }
  for (auto& node : tree.nodes) node.base_total = 0;
  for (const auto& stack : base) {
    uint32_t node = 0;
    tree.nodes[0].base_total += stack.count;
    for (const auto& frame : stack.frames) {
      auto label = label_ids.find(LabelRef{display_name(frame, scratch), frame.kind});
      if (label == label_ids.end()) break;
      auto child = children.find(uint64_t{node} << 32 | label->second);
      if (child == children.end()) break;
      node = child->second;
      tree.nodes[node].base_total += stack.count;
    }
  }
}

void prune(FlameTree& tree, double min_fraction) {
  if (tree.nodes.empty() || min_fraction <= 0) return;
  const double threshold = min_fraction * static_cast<double>(tree.total());
  std::vector<Node> kept;
  std::vector<uint32_t> new_label(tree.labels.size(), UINT32_MAX);
  std::vector<FrameLabel> labels;
  for (size_t i = 0; i < tree.nodes.size();) {
    const Node& node = tree.nodes[i];
    if (i != 0 && static_cast<double>(node.total) < threshold) {
      size_t next = i + 1;
      while (next < tree.nodes.size() && tree.nodes[next].depth > node.depth) ++next;
      i = next;
      continue;
    }
    if (new_label[node.label] == UINT32_MAX) {
      new_label[node.label] = static_cast<uint32_t>(labels.size());
      labels.push_back(tree.labels[node.label]);
    }
    kept.push_back(node);
    kept.back().label = new_label[node.label];
    ++i;
  }
  tree.nodes = std::move(kept);
  tree.labels = std::move(labels);
}

}  // namespace gp::flame
