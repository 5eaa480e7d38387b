// CPU profile → stacks (see cpu_profile.h).
#include "runtime/node/cpu_profile.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gp::runtime::node {
namespace {

struct ProfileNode {
  Frame frame;
  int64_t parent = 0;
  bool is_root = false;
  bool is_idle = false;
};

Frame frame_of(const json::Value& call_frame) {
  Frame f;
  f.kind = model::FrameKind::node;
  f.name = call_frame.get_string("functionName");
  if (f.name.empty()) f.name = "(anonymous)";
  f.file = call_frame.get_string("url");
  const json::Value* line = call_frame.find("lineNumber");
  const int64_t l = line != nullptr ? line->as_int(-1) : -1;
  f.start_line = l >= 0 ? static_cast<uint32_t>(l + 1) : 0;
  return f;
}

Result<std::unordered_map<int64_t, ProfileNode>> read_nodes(const json::Value& nodes) {
  std::unordered_map<int64_t, ProfileNode> out;
  for (const json::Value& n : nodes.items) {
    const json::Value* id = n.find("id");
    const json::Value* cf = n.find("callFrame");
    if (id == nullptr || cf == nullptr || !cf->is_object())
      return make_error("profile node without id or callFrame");
    ProfileNode& pn = out[id->as_int()];
    pn.frame = frame_of(*cf);
    const std::string raw = cf->get_string("functionName");
    pn.is_root = raw == "(root)";
    pn.is_idle = raw == "(idle)";
  }
  for (const json::Value& n : nodes.items) {
    const json::Value* children = n.find("children");
    if (children == nullptr) continue;
    for (const json::Value& c : children->items) {
      auto it = out.find(c.as_int());
      if (it != out.end()) it->second.parent = n.find("id")->as_int();
    }
  }
  return out;
}

}  // namespace

Result<std::vector<Stack>> stacks_from_cpu_profile(const json::Value& profile) {
  const json::Value* nodes = profile.find("nodes");
  const json::Value* samples = profile.find("samples");
  if (nodes == nullptr || !nodes->is_array()) return make_error("CPU profile has no nodes");
  auto table = read_nodes(*nodes);
  if (!table) return table.error();
  std::map<int64_t, uint64_t> hits;
  if (samples != nullptr) {
    for (const json::Value& s : samples->items) ++hits[s.as_int()];
  }
  std::vector<Stack> stacks;
  for (const auto& [id, count] : hits) {
    auto it = table->find(id);
    if (it == table->end() || it->second.is_idle || it->second.is_root) continue;
    Stack st;
    st.count = count;
    // Walk to the root; the depth bound guards against a cycle in a malformed profile.
    for (size_t depth = 0; it != table->end() && !it->second.is_root && depth < table->size();
         ++depth) {
      st.frames.push_back(it->second.frame);
      it = table->find(it->second.parent);
    }
    std::reverse(st.frames.begin(), st.frames.end());
    stacks.push_back(std::move(st));
  }
  return stacks;
}

}  // namespace gp::runtime::node
