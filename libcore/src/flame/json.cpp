#include "gp/flame/json.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "gp/util/json.h"

namespace gp::flame {
namespace {

// Buffers output so that a million small numbers do not cost a million ostream calls.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) { buffer_.reserve(kFlushAt + 64); }
  ~JsonWriter() { flush(); }
  void raw(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= kFlushAt) flush();
  }
  void number(uint64_t value) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    raw(std::string_view(digits, static_cast<size_t>(end - digits)));
  }
  template <typename Range, typename Fn>
  void array(std::string_view key, const Range& items, Fn&& emit) {
    raw(",\"");
    raw(key);
    raw("\":[");
    bool first = true;
    for (const auto& item : items) {
      if (!first) raw(",");
      first = false;
      emit(item);
    }
    raw("]");
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr size_t kFlushAt = 1 << 16;
  std::ostream& out_;
  std::string buffer_;
};

// Label indexes renumbered so that the labels used by most nodes get the shortest numbers.
std::vector<uint32_t> labels_by_use(const FlameTree& tree) {
  std::vector<uint64_t> uses(tree.labels.size(), 0);
  for (const auto& node : tree.nodes) ++uses[node.label];
  std::vector<uint32_t> order(tree.labels.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return uses[a] > uses[b]; });
  return order;
}

// Per node: its total minus its children's totals (`base` selects base_total).
std::vector<uint64_t> self_values(const FlameTree& tree, bool base) {
  std::vector<uint64_t> self(tree.nodes.size());
  std::vector<size_t> open;
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const Node& node = tree.nodes[i];
    const uint64_t value = base ? node.base_total : node.total;
    self[i] = value;
    open.resize(node.depth);
    if (!open.empty()) self[open.back()] -= std::min(value, self[open.back()]);
    open.push_back(i);
  }
  return self;
}

}  // namespace

const char* kind_name(model::FrameKind kind) {
  using K = model::FrameKind;
  switch (kind) {
    case K::unknown:
      return "unknown";
    case K::native:
      return "native";
    case K::kernel:
      return "kernel";
    case K::java:
      return "java";
    case K::python:
      return "python";
    case K::ruby:
      return "ruby";
    case K::php:
      return "php";
    case K::dotnet:
      return "dotnet";
    case K::node:
      return "node";
    case K::go:
      return "go";
    case K::jit:
      return "jit";
    case K::python_native:
      return "python_native";
    case K::pseudo:
      return "pseudo";
    case K::interpreted:
      return "interpreted";
    case K::inlined:
      return "inlined";
  }
  return "unknown";
}

std::string json_string(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  json::append_quoted(text, out, json::QuoteStyle{.ensure_ascii = false, .script_safe = true});
  return out;
}

void write_tree_json(std::ostream& out, const FlameTree& tree) {
  const auto order = labels_by_use(tree);
  std::vector<uint32_t> new_index(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) new_index[order[i]] = i;

  JsonWriter json(out);
  json.raw("{\"differential\":");
  json.raw(tree.differential ? "true" : "false");
  std::vector<int> kinds(model::kFrameKindCount);
  std::iota(kinds.begin(), kinds.end(), 0);
  json.array("kindNames", kinds,
             [&](int k) { json.raw(json_string(kind_name(static_cast<model::FrameKind>(k)))); });
  json.array("names", order, [&](uint32_t l) { json.raw(json_string(tree.labels[l].name)); });
  json.array("kinds", order,
             [&](uint32_t l) { json.number(static_cast<uint64_t>(tree.labels[l].kind)); });
  json.array("label", tree.nodes, [&](const Node& n) { json.number(new_index[n.label]); });
  uint32_t previous = 0;
  json.array("up", tree.nodes, [&](const Node& n) {
    json.number(previous + 1 - n.depth);  // depth never grows by more than one
    previous = n.depth;
  });
  json.array("self", self_values(tree, false), [&](uint64_t v) { json.number(v); });
  if (tree.differential)
    json.array("bself", self_values(tree, true), [&](uint64_t v) { json.number(v); });
  json.raw("}");
}

}  // namespace gp::flame
