// Collapsed text (.col / folded) → one session. See gp/ingest/collapsed.h for the grammar.
#include "gp/ingest/collapsed.h"

#include <charconv>
#include <cstdint>
#include <unordered_map>

#include "gp/archive/reader.h"
#include "gp/fold/stacks.h"
#include "gp/model/builder.h"
#include "gp/util/json.h"

namespace gp::ingest {
namespace {

using model::FrameKind;

struct SuffixKind {
  std::string_view suffix;
  FrameKind kind;
};
// gProfiler's frame annotations (reference/gprofiler.md §2.5). Longer suffixes first.
constexpr SuffixKind kSuffixes[] = {
    {"_[php]", FrameKind::php},  {"_[net]", FrameKind::dotnet}, {"_[pn]", FrameKind::python_native},
    {"_[rb]", FrameKind::ruby},  {"_[k]", FrameKind::kernel},   {"_[j]", FrameKind::java},
    {"_[p]", FrameKind::python}, {"_[i]", FrameKind::inlined},
};

// How the lines of a `.col` start (gprofiler.md §2.4).
struct Layout {
  bool is_col = false;
  bool has_index = false;
  bool has_container = false;
  std::vector<std::string> app_metadata;  // dumped dicts; "" for null (index 0)
};

bool parse_count(std::string_view text, uint64_t& count) {
  if (text.empty()) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), count);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

void fill_header_from_col(const json::Value& doc, model::Header& h) {
  if (const json::Value* md = doc.find("metadata"); md != nullptr && md->is_object()) {
    h.metadata_json = json::dump(*md);
    h.host.hostname = md->get_string("hostname");
    h.host.kernel_release = md->get_string("kernel_release");
    h.host.kernel_version = md->get_string("kernel_version");
    if (const json::Value* n = md->find("processors")) h.host.cpu_count = n->as_int(0);
  }
  h.sampling.event = doc.get_string("sampling_event");
  if (h.sampling.event == "cpu-time") h.sampling.event = "cpu-clock";  // archive.capnp's spelling
  if (const json::Value* f = doc.find("sampling_frequency")) h.sampling.frequency_hz = f->as_int(0);
  if (const json::Value* p = doc.find("sampling_period")) h.sampling.period = p->as_int(0);
}

// Recognises gProfiler's header line; fills the session header from it. A line that claims to
// be one (a JSON object naming application_metadata) but is not is an error: read as plain
// folded text, its index and container columns would become frames.
Result<Layout> read_header(std::string_view line, model::Header& h) {
  Layout layout;
  if (line.substr(0, 2) != "# ") return layout;
  const bool claims =
      line.substr(2, 1) == "{" && line.find("\"application_metadata\"") != std::string_view::npos;
  auto doc = json::parse(line.substr(2));
  if (!doc || !doc->is_object()) {
    if (claims)
      return make_error("malformed .col header on line 1: " +
                        (doc ? std::string("not an object") : doc.error().message));
    return layout;
  }
  const json::Value* app = doc->find("application_metadata");
  if (app == nullptr || !app->is_array()) {
    if (claims && app != nullptr)
      return make_error("malformed .col header on line 1: application_metadata is not a list");
    return layout;
  }
  layout.is_col = true;
  const json::Value* enabled = doc->find("application_metadata_enabled");
  bool v1 = false;
  if (const json::Value* md = doc->find("metadata")) {
    if (const json::Value* ra = md->find("run_arguments"))
      v1 = ra->get_string("profile_api_version") == "v1";
  }
  layout.has_index =
      !v1 && (enabled == nullptr || enabled->type != json::Type::boolean || enabled->boolean);
  layout.has_container = !v1;
  for (const json::Value& item : app->items)
    layout.app_metadata.push_back(item.is_null() ? std::string() : json::dump(item));
  if (layout.app_metadata.empty()) layout.app_metadata.emplace_back();
  fill_header_from_col(*doc, h);
  return layout;
}

class LineReader {
 public:
  LineReader(model::Session& s, const Layout& layout) : b_(s), layout_(layout) {}

  // Adds one stack line; on failure returns false with `why` set.
  bool add(std::string_view line, std::string& why) {
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos) {
      why = "no count after the last space";
      return false;
    }
    uint64_t count = 0;
    if (!parse_count(line.substr(space + 1), count)) {
      why = "count '" + std::string(line.substr(space + 1, 20)) + "' is not a number";
      return false;
    }
    if (count > UINT64_MAX - total_) {  // saturating would misstate every share; refuse the line
      why = "count " + std::to_string(count) + " makes the profile's total overflow 64 bits";
      return false;
    }
    if (!split(line.substr(0, space))) {
      why = "more than " + std::to_string(kMaxFrames) + " frames";
      return false;
    }
    size_t pos = 0;
    ProcessFields p;
    if (!prefix(pos, p, why)) return false;
    if (count == 0) return true;  // gProfiler's indexer drops zero counts too
    total_ += count;
    const model::StackEnd end = take_truncated_marker(pos);
    std::vector<uint64_t> leaf_first;
    for (size_t i = frames_.size(); i > pos; --i) leaf_first.push_back(location(frames_[i - 1]));
    int32_t pid = process(p);
    b_.add_sample(pid, pid_tid_.at(key_), b_.stack(leaf_first, end), count);
    return true;
  }

 private:
  struct ProcessFields {
    std::string_view comm, container, appid;
    size_t app_index = 0;
  };

  // False when the line has more frames than an archive stack may (formats/README.md §6): a
  // 1 GB line of them would otherwise cost gigabytes of views before being refused.
  bool split(std::string_view stack) {
    frames_.clear();
    size_t start = 0;
    for (;;) {
      if (frames_.size() > kMaxFrames + 3) return false;  // + index, container, comm
      size_t semi = stack.find(';', start);
      frames_.push_back(stack.substr(start, semi - start));
      if (semi == std::string_view::npos) break;
      start = semi + 1;
    }
    return true;
  }

  // gp-fold's "[truncated]" root (after the prefix and an error frame, if any) is the stack's
  // end, not a frame: it is taken out, so that folding the text again can show or hide it.
  model::StackEnd take_truncated_marker(size_t pos) {
    size_t at = pos;
    if (at + 1 < frames_.size() && is_error_frame(frames_[at])) ++at;
    if (at + 1 >= frames_.size() || frames_[at] != fold::kTruncatedFrame)
      return model::StackEnd::unknown;
    frames_.erase(frames_.begin() + static_cast<std::ptrdiff_t>(at));
    return model::StackEnd::truncated;
  }
  static bool is_error_frame(std::string_view name) {
    return name.substr(0, 11) == "[Profiling " && name.ends_with(']');
  }

  bool prefix(size_t& pos, ProcessFields& p, std::string& why) {
    size_t needed = 1 + (layout_.has_index ? 1 : 0) + (layout_.has_container ? 1 : 0);
    if (frames_.size() < needed) {
      why = "too few frames for the .col line prefix";
      return false;
    }
    if (layout_.has_index) {
      uint64_t idx = 0;
      if (!parse_count(frames_[pos], idx) || idx >= layout_.app_metadata.size()) {
        why = "application metadata index '" + std::string(frames_[pos].substr(0, 20)) +
              "' is not an index of the header's list";
        return false;
      }
      p.app_index = idx;
      ++pos;
    }
    if (layout_.has_container) p.container = frames_[pos++];
    p.comm = frames_[pos++];
    constexpr std::string_view kAppid = "appid: ";
    if (layout_.is_col && pos < frames_.size() && frames_[pos].substr(0, kAppid.size()) == kAppid) {
      p.appid = frames_[pos].substr(kAppid.size());
      ++pos;
    }
    return true;
  }

  int32_t process(const ProcessFields& f) {
    key_.clear();
    for (std::string_view part : {f.comm, f.container, f.appid}) {
      key_ += part;
      key_ += '\0';
    }
    key_ += std::to_string(f.app_index);
    auto it = pid_of_.find(key_);
    if (it != pid_of_.end()) return it->second;
    int32_t id = next_id_++;
    bool idle = f.comm.substr(0, 7) == "swapper" && f.container.empty() && f.appid.empty();
    int32_t pid = idle ? 0 : id;
    if (idle) {
      b_.thread(id, 0, f.comm);  // per-cpu idle comms ("swapper/3") live on their threads
    } else {
      model::Process p;
      p.pid = pid;
      p.comm = std::string(f.comm);
      p.container_name = std::string(f.container);
      p.appid = std::string(f.appid);
      p.app_metadata_json = layout_.app_metadata.empty() ? "" : layout_.app_metadata[f.app_index];
      b_.process(p);
      b_.thread(id, pid, f.comm);
    }
    pid_of_.emplace(key_, pid);
    pid_tid_.emplace(key_, id);
    return pid;
  }

  uint64_t location(std::string_view frame) {
    auto it = locations_.find(frame);
    if (it != locations_.end()) return it->second;
    std::string_view name = frame;
    FrameKind kind = split_kind_suffix(name);
    if (kind == FrameKind::unknown && is_error_frame(name))
      kind = FrameKind::pseudo;  // gProfiler's error/skip frame (§2.9)
    uint64_t id = b_.symbolic_location(kind, b_.function(name));
    locations_.emplace(std::string(frame), id);
    return id;
  }

  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  model::SessionBuilder b_;
  const Layout& layout_;
  std::vector<std::string_view> frames_;
  std::string key_;
  std::unordered_map<std::string, int32_t> pid_of_;
  std::unordered_map<std::string, int32_t> pid_tid_;
  std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>> locations_;
  int32_t next_id_ = 1;
  uint64_t total_ = 0;  // sum of the counts so far: kept within 64 bits
  static constexpr size_t kMaxFrames = archive::ReaderLimits{}.max_stack_frames;
};

std::string_view next_line(std::string_view text, size_t& pos) {
  size_t nl = text.find('\n', pos);
  std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
  pos = nl == std::string_view::npos ? text.size() : nl + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

model::FrameKind split_kind_suffix(std::string_view& name) {
  if (name.empty() || name.back() != ']') return FrameKind::unknown;
  for (const SuffixKind& s : kSuffixes) {
    if (name.size() > s.suffix.size() && name.ends_with(s.suffix)) {
      name.remove_suffix(s.suffix.size());
      return s.kind;
    }
  }
  return FrameKind::unknown;
}

Result<model::Archive> parse_collapsed(std::string_view text, const std::string& name) {
  model::Archive archive;
  model::Session& s = archive.sessions.emplace_back();
  s.header.source = model::SourceKind::folded;
  size_t pos = 0;
  Layout layout;
  if (text.substr(0, 2) == "# ") {
    size_t first_end = pos;
    auto read = read_header(next_line(text, first_end), s.header);
    if (!read)
      return make_error("'" + name + "' is not a collapsed profile: " + read.error().message);
    layout = std::move(*read);
  }
  LineReader reader(s, layout);
  size_t line_no = 0, bad = 0, good = 0;
  std::string first_problem, why;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (reader.add(line, why)) {
      ++good;
    } else if (bad++ == 0) {
      first_problem = "line " + std::to_string(line_no) + ": " + why;
    }
  }
  if (bad > 0 && good == 0)
    return make_error("'" + name + "' is not a collapsed profile: " + first_problem);
  if (bad > 0) {
    archive.truncated = s.truncated = true;
    archive.problem = "profile '" + name + "' has " + std::to_string(bad) + " malformed line" +
                      (bad == 1 ? "" : "s") + ", skipped (first: " + first_problem + ")";
  }
  return archive;
}

}  // namespace gp::ingest
