// JFR execution samples from `jfr print --json` (see jfr_samples.h).
#include "jfr_samples.h"

#include <vector>

namespace gp::runtime::java {
namespace {

const json::Value* path(const json::Value& v, std::initializer_list<std::string_view> keys) {
  const json::Value* cur = &v;
  for (auto k : keys) {
    cur = cur->find(k);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

// Cuts the elements of the one array nested two objects deep ({"recording": {"events": [..]}})
// out of a JSON stream, without parsing anything else.
class EventSplitter {
 public:
  template <typename F>
  void feed(std::string_view chunk, F&& on_event) {
    for (char c : chunk) {
      if (capturing_) current_ += c;
      if (in_string_) {
        if (escape_) escape_ = false;
        else if (c == '\\') escape_ = true;
        else if (c == '"') in_string_ = false;
        continue;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        open(c);
      } else if (c == '}' || c == ']') {
        if (!nesting_.empty()) nesting_.pop_back();
        if (capturing_ && nesting_.size() == 3) {
          on_event(current_);
          current_.clear();
          capturing_ = false;
        }
      }
    }
  }
  bool saw_events() const { return saw_events_; }

 private:
  void open(char c) {
    nesting_.push_back(c);
    bool in_events =
        nesting_.size() == 4 && nesting_[0] == '{' && nesting_[1] == '{' && nesting_[2] == '[';
    if (nesting_.size() == 3 && c == '[') saw_events_ = true;
    if (in_events && c == '{' && !capturing_) {
      capturing_ = true;
      current_ = "{";
    }
  }

  std::vector<char> nesting_;
  std::string current_;
  bool capturing_ = false;
  bool in_string_ = false;
  bool escape_ = false;
  bool saw_events_ = false;
};

}  // namespace

std::string java_frame_name(std::string_view class_name, std::string_view method,
                            std::string_view descriptor) {
  std::string out;
  out.reserve(class_name.size() + method.size() + descriptor.size() + 1);
  out.append(class_name);
  out += '.';
  out.append(method);
  for (char c : descriptor) out += c == ';' ? '|' : c;  // async-profiler's STYLE_NO_SEMICOLON
  return out;
}

Frame jfr_frame(const json::Value& frame) {
  Frame f;
  const json::Value* method = frame.find("method");
  std::string cls, name, descriptor;
  if (method != nullptr) {
    if (const json::Value* type = method->find("type")) cls = type->get_string("name");
    name = method->get_string("name");
    descriptor = method->get_string("descriptor");
  }
  f.name = cls.empty() && name.empty() ? "[unknown]" : java_frame_name(cls, name, descriptor);
  f.kind =
      frame.get_string("type") == "Inlined" ? model::FrameKind::inlined : model::FrameKind::java;
  if (const json::Value* line = frame.find("lineNumber"); line != nullptr && line->is_number()) {
    int64_t n = line->as_int(0);
    if (n > 0 && n < (1ll << 31)) f.line = static_cast<uint32_t>(n);
  }
  return f;
}

Result<Stack> jfr_sample(const json::Value& event) {
  const json::Value* values = event.find("values");
  const json::Value* frames = values ? path(*values, {"stackTrace", "frames"}) : nullptr;
  if (frames == nullptr || !frames->is_array()) return make_error("event without a stack trace");
  Stack s;
  s.count = 1;
  if (const json::Value* thread = values->find("sampledThread"); thread && thread->is_object()) {
    if (const json::Value* tid = thread->find("osThreadId")) {
      s.tid = static_cast<int32_t>(tid->as_int(0));
    }
    s.thread_name = thread->get_string("javaName", thread->get_string("osName"));
  }
  // JFR lists the leaf first; gp stacks are root first.
  for (auto it = frames->items.rbegin(); it != frames->items.rend(); ++it) {
    s.frames.push_back(jfr_frame(*it));
  }
  return s;
}

Result<JfrReadStats> read_jfr_json(std::istream& in, StackTable& table) {
  JfrReadStats stats;
  EventSplitter splitter;
  auto on_event = [&](const std::string& text) {
    auto event = json::parse(text);
    if (!event || event->get_string("type") != "jdk.ExecutionSample") {
      stats.bad += event ? 0 : 1;
      return;
    }
    auto stack = jfr_sample(*event);
    if (!stack) {
      ++stats.bad;
      return;
    }
    ++stats.events;
    const json::Value* truncated = path(*event, {"values", "stackTrace", "truncated"});
    if (truncated != nullptr && truncated->boolean) ++stats.truncated;
    table.add(std::move(*stack));
  };
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::streamsize n = in.gcount();
    if (n <= 0) break;
    splitter.feed(std::string_view(buf.data(), static_cast<size_t>(n)), on_event);
  }
  if (!splitter.saw_events()) {
    return make_error("not the JSON of 'jfr print' (no recording.events array)");
  }
  return stats;
}

}  // namespace gp::runtime::java
