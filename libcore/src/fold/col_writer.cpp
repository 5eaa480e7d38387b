// write_col: samples → gProfiler `.col` lines (reference/gprofiler.md §2.4), summed and sorted.
#include <algorithm>
#include <unordered_map>

#include "fold/col_context.h"
#include "fold/stack_namer.h"

namespace gp::fold {
namespace {

// Builds line texts (without counts) for one session, caching per stack and per process.
class LineBuilder {
 public:
  LineBuilder(const model::Session& s, const detail::ColContext& ctx, const ColOptions& o)
      : s_(s), namer_(s), procs_(s), ctx_(ctx), o_(o), stack_text_(s.stacks.size() + 1),
        location_text_(s.locations.size() + 1) {}

  void line(const model::Sample& smp, std::string& out) {
    out = prefix(smp.pid, smp.tid);
    const std::string& frames = stack_text(smp.stack_id);
    if (!frames.empty()) {
      out += ';';
      out += frames;
    }
  }

 private:
  // [idx;]container;comm[;appid: X][;error frame] — gProfiler's order: the error frame is
  // attached after comm by the merge, the appid inserted after comm afterwards.
  const std::string& prefix(int32_t pid, int32_t tid) {
    int64_t key = (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
    auto [it, inserted] = prefixes_.try_emplace(key);
    if (!inserted) return it->second;
    std::string& out = it->second;
    const model::Process* p = procs_.find(pid);
    if (o_.profile_api_version != "v1") {
      if (o_.application_metadata) {
        size_t idx = 0;
        if (p != nullptr && !p->app_metadata_json.empty()) idx = ctx_.app_index.at(p->app_metadata_json);
        out += std::to_string(idx) + ";";
      }
      if (p != nullptr) detail::append_col_field(p->container_name, out);
      out += ';';
    }
    detail::append_col_field(procs_.comm(pid, tid), out);
    if (p != nullptr && !p->appid.empty()) {
      out += ";appid: ";
      detail::append_col_field(p->appid, out);
    }
    if (p != nullptr && !p->error_frame.empty()) {
      out += ';';
      detail::append_col_field(p->error_frame, out);
    }
    return out;
  }

  const std::string& stack_text(uint64_t id) {
    static const std::string kEmpty;
    if (id == 0 || id >= stack_text_.size()) return kEmpty;
    std::string& text = stack_text_[id];
    if (!text.empty()) return text;
    const std::vector<uint64_t>& ids = s_.stack(id).location_ids;  // leaf first
    for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
      if (it != ids.rbegin()) text += ';';
      text += location_text(*it);
    }
    return text;
  }

  // A location's frames as `.col` text, formatted once per location.
  const std::string& location_text(uint64_t id) {
    static const std::string kUnknown = "[unknown]";
    if (id >= location_text_.size()) return kUnknown;
    std::string& text = location_text_[id];
    if (!text.empty()) return text;
    for (const Frame& f : namer_.location(id).frames) {
      if (!text.empty()) text += ';';
      detail::append_col_field(f.name, text);
      text += kind_suffix(f.kind);
    }
    return text;
  }

  const model::Session& s_;
  detail::StackNamer namer_;
  detail::ProcessTable procs_;
  const detail::ColContext& ctx_;
  const ColOptions& o_;
  std::vector<std::string> stack_text_;
  std::vector<std::string> location_text_;
  std::unordered_map<int64_t, std::string> prefixes_;
};

}  // namespace

Status write_col(const model::Archive& archive, const ColOptions& options, std::ostream& out) {
  if (options.profile_api_version != "v1" && options.profile_api_version != "v2")
    return make_error("unknown profile API version '" + options.profile_api_version + "'");
  detail::ColContext ctx = detail::make_col_context(archive, options);
  std::unordered_map<std::string, uint64_t> counts;
  std::string line;
  for (const model::Session& s : archive.sessions) {
    LineBuilder builder(s, ctx, options);
    for (const model::Sample& smp : s.samples) {
      if (smp.count == 0 || (smp.pid == 0 && !options.include_idle)) continue;
      builder.line(smp, line);
      counts[line] += smp.count;
    }
  }
  std::vector<std::pair<std::string, uint64_t>> lines(counts.begin(), counts.end());
  counts.clear();
  std::sort(lines.begin(), lines.end());
  out << "# " << json::dump(detail::make_col_header(archive, options, ctx));
  for (const auto& [text, count] : lines) out << '\n' << text << ' ' << count;
  return ok_status();
}

}  // namespace gp::fold
