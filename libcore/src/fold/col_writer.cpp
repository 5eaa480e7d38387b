// write_col: samples → gProfiler `.col` lines (reference/gprofiler.md §2.4), summed and sorted.
//
// Samples are summed on integer ids, not on line texts: every frame text is interned once (a
// token), every stack becomes a sequence of tokens interned once, every (pid, tid) a prefix,
// and a sample adds its count under (prefix, sequence). Line texts are built only for the
// distinct (prefix, sequence) pairs at the end — a few thousand against 100k+ samples.
#include <algorithm>
#include <unordered_map>

#include "fold/col_context.h"
#include "fold/stack_namer.h"
#include "model/string_table.h"

namespace gp::fold {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// The archive-wide tables: texts and sequences by id, counts by (prefix, sequence).
class LineTable {
 public:
  // A frame's `.col` text ("name_[k]"), looked up by its raw name and kind first: escaping is
  // done once per distinct text.
  uint32_t token(std::string_view name, model::FrameKind kind) {
    raw_key_.assign(1, static_cast<char>(kind));
    raw_key_.append(name);
    if (uint32_t* id = raw_tokens_.find(raw_key_)) return *id;
    std::string text;
    detail::append_col_field(name, text);
    text += kind_suffix(kind);
    // Two raw names can escape to one text ("a;b", "a|b"): they share the token.
    auto [id, inserted] = tokens_.try_insert(text, static_cast<uint32_t>(token_texts_.size()));
    if (inserted) token_texts_.push_back(std::move(text));
    raw_tokens_.insert(raw_key_, *id);
    return *id;
  }

  uint32_t sequence(const std::vector<uint32_t>& tokens) {
    std::string_view key(reinterpret_cast<const char*>(tokens.data()),
                         tokens.size() * sizeof(uint32_t));
    auto [id, inserted] = sequences_.try_insert(key, static_cast<uint32_t>(seq_begin_.size()));
    if (inserted) {
      seq_begin_.push_back(static_cast<uint32_t>(seq_tokens_.size()));
      seq_tokens_.insert(seq_tokens_.end(), tokens.begin(), tokens.end());
      seq_end_.push_back(static_cast<uint32_t>(seq_tokens_.size()));
    }
    return *id;
  }

  uint32_t prefix(const std::string& text) {
    auto [id, inserted] = prefixes_.try_insert(text, static_cast<uint32_t>(prefix_texts_.size()));
    if (inserted) prefix_texts_.push_back(text);
    return *id;
  }

  void add(uint32_t prefix, uint32_t sequence, uint64_t count) {
    uint64_t key = (static_cast<uint64_t>(prefix) << 32) | sequence;
    auto [at, inserted] = line_index_.try_insert(
        std::string_view(reinterpret_cast<const char*>(&key), sizeof key), lines_.size());
    if (inserted) lines_.push_back({prefix, sequence, count});
    else lines_[*at].count += count;
  }

  // The distinct lines as (text, count), sorted by text; equal texts are summed (an error
  // frame in the prefix can spell the same line as a stack that starts with that frame).
  std::vector<std::pair<std::string, uint64_t>> take_sorted() {
    std::vector<std::pair<std::string, uint64_t>> out;
    out.reserve(lines_.size());
    for (const Line& l : lines_) {
      std::string text = prefix_texts_[l.prefix];
      for (uint32_t i = seq_begin_[l.sequence]; i < seq_end_[l.sequence]; ++i) {
        text += ';';
        text += token_texts_[seq_tokens_[i]];
      }
      out.emplace_back(std::move(text), l.count);
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t kept = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      if (kept > 0 && out[kept - 1].first == out[i].first) out[kept - 1].second += out[i].second;
      else if (kept++ != i) out[kept - 1] = std::move(out[i]);
    }
    out.resize(kept);
    return out;
  }

 private:
  struct Line {
    uint32_t prefix;
    uint32_t sequence;
    uint64_t count;
  };
  std::string raw_key_;
  model::StringTable<uint32_t> raw_tokens_;  // kind + raw name → token
  model::StringTable<uint32_t> tokens_;      // text → token
  std::vector<std::string> token_texts_;
  model::StringTable<uint32_t> sequences_;  // token ids → sequence
  std::vector<uint32_t> seq_begin_, seq_end_, seq_tokens_;
  model::StringTable<uint32_t> prefixes_;
  std::vector<std::string> prefix_texts_;
  model::StringTable<size_t> line_index_;  // (prefix, sequence) → index in lines_
  std::vector<Line> lines_;
};

// One session's samples into the table, caching tokens per location, sequences per stack and
// prefixes per (pid, tid).
class SessionLines {
 public:
  SessionLines(const model::Session& s, const detail::ColContext& ctx, const ColOptions& o,
               LineTable& t)
      : s_(s),
        namer_(s),
        procs_(s),
        ctx_(ctx),
        o_(o),
        t_(t),
        stack_seq_(s.stacks.size() + 1, kNone),
        location_begin_(s.locations.size() + 1, kNone),
        location_end_(s.locations.size() + 1, 0) {}

  void add(const model::Sample& smp) {
    t_.add(prefix(smp.pid, smp.tid), stack_sequence(smp.stack_id), smp.count);
  }

 private:
  // [idx;]container;comm[;appid: X][;error frame] — gProfiler's order: the error frame is
  // attached after comm by the merge, the appid inserted after comm afterwards.
  uint32_t prefix(int32_t pid, int32_t tid) {
    int64_t key = (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
    if (key == last_key_ && last_prefix_ != kNone) return last_prefix_;
    auto [it, inserted] = prefixes_.try_emplace(key, kNone);
    if (inserted) it->second = t_.prefix(prefix_text(pid, tid));
    last_key_ = key;
    last_prefix_ = it->second;
    return it->second;
  }

  std::string prefix_text(int32_t pid, int32_t tid) const {
    std::string out;
    const model::Process* p = procs_.find(pid);
    if (o_.profile_api_version != "v1") {
      if (o_.application_metadata) {
        size_t idx = 0;
        if (p != nullptr && !p->app_metadata_json.empty())
          idx = ctx_.app_index.at(p->app_metadata_json);
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

  // The stack's tokens, root first.
  uint32_t stack_sequence(uint64_t id) {
    bool valid = id != 0 && id < stack_seq_.size();
    uint32_t& seq = valid ? stack_seq_[id] : invalid_stack_seq_;
    if (seq != kNone) return seq;
    tokens_.clear();
    if (valid) {
      const std::vector<uint64_t>& ids = s_.stack(id).location_ids;  // leaf first
      for (auto it = ids.rbegin(); it != ids.rend(); ++it) append_location(*it);
    }
    seq = t_.sequence(tokens_);
    return seq;
  }

  void append_location(uint64_t id) {
    if (id >= location_begin_.size()) {  // not a location of this session
      tokens_.push_back(t_.token("[unknown]", model::FrameKind::unknown));
      return;
    }
    if (location_begin_[id] == kNone) {
      location_begin_[id] = static_cast<uint32_t>(location_tokens_.size());
      namer_.for_each_frame(id, [&](std::string_view name, model::FrameKind kind) {
        location_tokens_.push_back(t_.token(name, kind));
      });
      location_end_[id] = static_cast<uint32_t>(location_tokens_.size());
    }
    tokens_.insert(tokens_.end(), location_tokens_.begin() + location_begin_[id],
                   location_tokens_.begin() + location_end_[id]);
  }

  const model::Session& s_;
  detail::StackNamer namer_;
  detail::ProcessTable procs_;
  const detail::ColContext& ctx_;
  const ColOptions& o_;
  LineTable& t_;
  std::vector<uint32_t> stack_seq_;
  uint32_t invalid_stack_seq_ = kNone;
  std::vector<uint32_t> location_begin_, location_end_, location_tokens_;
  std::vector<uint32_t> tokens_;
  std::unordered_map<int64_t, uint32_t> prefixes_;
  int64_t last_key_ = 0;
  uint32_t last_prefix_ = kNone;
};

}  // namespace

Status write_col(const model::Archive& archive, const ColOptions& options, std::ostream& out) {
  if (options.profile_api_version != "v1" && options.profile_api_version != "v2")
    return make_error("unknown profile API version '" + options.profile_api_version + "'");
  detail::ColContext ctx = detail::make_col_context(archive, options);
  LineTable table;
  for (const model::Session& s : archive.sessions) {
    SessionLines lines(s, ctx, options, table);
    for (const model::Sample& smp : s.samples) {
      if (smp.count == 0 || (smp.pid == 0 && !options.include_idle)) continue;
      lines.add(smp);
    }
  }
  out << "# " << json::dump(detail::make_col_header(archive, options, ctx));
  std::string text;
  for (const auto& [line, count] : table.take_sorted()) {
    text.clear();
    text += '\n';
    text += line;
    text += ' ';
    text += std::to_string(count);
    out << text;
  }
  return ok_status();
}

}  // namespace gp::fold
