// Folded stacks → speedscope's JSON file format. Written by hand: the document is a few
// arrays of integers and strings, and streaming it keeps memory flat on 100k-stack profiles.
#include "gp/fold/speedscope.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "gp/util/json.h"
#include "gp/util/version.h"

namespace gp::fold {

namespace {

constexpr const char* kSchemaUrl = "https://www.speedscope.app/file-format-schema.json";

// A frame's identity in the frame table; views into the caller's stacks.
struct FrameKey {
  std::string_view name;
  model::FrameKind kind;
  bool operator==(const FrameKey&) const = default;
};

struct FrameKeyHash {
  size_t operator()(const FrameKey& k) const {
    return std::hash<std::string_view>{}(k.name) * 31 + static_cast<size_t>(k.kind);
  }
};

// Display name of a frame: the folded spelling, so speedscope and flamegraphs agree.
std::string frame_name(const Frame& f) { return f.name + kind_suffix(f.kind); }

}  // namespace

std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  json::append_quoted(s, out, json::QuoteStyle{.ensure_ascii = false, .escape_del = true});
  return out;
}

Status write_speedscope(const std::vector<FoldedStack>& stacks, const std::string& name,
                        std::ostream& out) {
  // Frame table: index per distinct (name, kind), in order of first appearance.
  std::unordered_map<FrameKey, size_t, FrameKeyHash> frame_index;
  std::vector<const Frame*> frames;
  std::vector<std::vector<size_t>> samples;
  samples.reserve(stacks.size());
  uint64_t total = 0;
  for (const FoldedStack& stack : stacks) {
    std::vector<size_t>& sample = samples.emplace_back();
    sample.reserve(stack.frames.size());
    for (const Frame& f : stack.frames) {
      auto [it, inserted] = frame_index.try_emplace(FrameKey{f.name, f.kind}, frames.size());
      if (inserted) frames.push_back(&f);
      sample.push_back(it->second);
    }
    total += stack.count;
  }

  std::string title = json_string(name);
  std::string buf;
  buf += "{\"$schema\":\"" + std::string(kSchemaUrl) + "\",\n";
  buf += "\"exporter\":" + json_string(std::string("gp@") + kVersion) + ",\n";
  buf += "\"name\":" + title + ",\n\"activeProfileIndex\":0,\n";
  buf += "\"shared\":{\"frames\":[";
  for (size_t i = 0; i < frames.size(); ++i) {
    buf += i == 0 ? "\n" : ",\n";
    buf += "{\"name\":" + json_string(frame_name(*frames[i])) + "}";
  }
  buf += "]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":" + title +
         ",\"unit\":\"none\",\"startValue\":0,\"endValue\":" + std::to_string(total) +
         ",\n\"samples\":[";
  for (size_t i = 0; i < samples.size(); ++i) {
    buf += i == 0 ? "\n[" : ",\n[";
    for (size_t k = 0; k < samples[i].size(); ++k) {
      if (k > 0) buf.push_back(',');
      buf += std::to_string(samples[i][k]);
    }
    buf.push_back(']');
    if (buf.size() > (1 << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  buf += "],\n\"weights\":[";
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (i > 0) buf.push_back(',');
    buf += std::to_string(stacks[i].count);
  }
  buf += "]}]}\n";
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (!out) return make_error(std::string("write failed: ") + std::strerror(errno));
  return ok_status();
}

}  // namespace gp::fold
