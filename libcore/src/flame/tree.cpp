#include "gp/flame/tree.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace gp::flame {
namespace {

constexpr std::string_view kRootName = "root";

// gProfiler's async-profiler fork writes `;` inside JVM signatures as `|` (a `;` would split
// the folded line); its flamegraph converter turns them back, and so do we.
std::string display_name(const fold::Frame& frame) {
  if (frame.kind != model::FrameKind::java) return frame.name;
  std::string name = frame.name;
  std::replace(name.begin(), name.end(), '|', ';');
  return name;
}

std::string label_key(std::string_view name, model::FrameKind kind) {
  std::string key(name);
  key.push_back('\0');
  key.push_back(static_cast<char>(kind));
  return key;
}

// Interns labels and remembers each stack as a sequence of label ids.
class LabelTable {
 public:
  uint32_t intern(std::string name, model::FrameKind kind) {
    auto [it, inserted] = ids_.try_emplace(label_key(name, kind), labels_.size());
    if (inserted) labels_.push_back(FrameLabel{std::move(name), kind});
    return static_cast<uint32_t>(it->second);
  }
  std::vector<FrameLabel>& labels() { return labels_; }

 private:
  std::unordered_map<std::string, size_t> ids_;
  std::vector<FrameLabel> labels_;
};

// Rank of each label in (name, kind) order: children are sorted by it.
std::vector<uint32_t> label_ranks(const std::vector<FrameLabel>& labels) {
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
  table.intern(std::string(kRootName), model::FrameKind::pseudo);
  std::vector<std::vector<uint32_t>> paths;
  std::vector<uint64_t> counts;
  for (const auto& stack : stacks) {
    if (stack.count == 0) continue;
    std::vector<uint32_t> path;
    path.reserve(stack.frames.size());
    for (const auto& frame : stack.frames) path.push_back(table.intern(display_name(frame), frame.kind));
    paths.push_back(std::move(path));
    counts.push_back(stack.count);
  }
  const auto rank = label_ranks(table.labels());
  std::vector<size_t> order(paths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Lexicographic order by rank puts every prefix before its extensions and keeps stacks
  // that share a prefix together, so one pass along the sorted list builds the preorder.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::lexicographical_compare(paths[a].begin(), paths[a].end(), paths[b].begin(), paths[b].end(),
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
  tree.labels = std::move(table.labels());
  return tree;
}

void add_base(FlameTree& tree, const std::vector<fold::FoldedStack>& base) {
  tree.differential = true;
  std::unordered_map<std::string, uint32_t> label_ids;
  for (uint32_t i = 0; i < tree.labels.size(); ++i)
    label_ids.emplace(label_key(tree.labels[i].name, tree.labels[i].kind), i);
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
      auto label = label_ids.find(label_key(display_name(frame), frame.kind));
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
