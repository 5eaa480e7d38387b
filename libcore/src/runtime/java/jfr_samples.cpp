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
                            std::string_view descriptor, uint32_t line) {
  std::string out;
  out.reserve(class_name.size() + method.size() + descriptor.size() + 12);
  out.append(class_name);
  out += '.';
  out.append(method);
  if (line != 0) out += ':' + std::to_string(line);
  for (char c : descriptor) out += c == ';' ? '|' : c;  // async-profiler's STYLE_NO_SEMICOLON
  return out;
}

std::string java_method_modifiers(int64_t flags) {
  // JVMS table 4.6-A's method flags, in the order java.lang.reflect.Modifier.toString writes them.
  static constexpr std::pair<int64_t, const char*> kFlags[] = {
      {0x0001, "public"},       {0x0004, "protected"}, {0x0002, "private"},
      {0x0400, "abstract"},     {0x0008, "static"},    {0x0010, "final"},
      {0x0020, "synchronized"}, {0x0100, "native"},    {0x0800, "strictfp"}};
  std::string out;
  for (const auto& [bit, word] : kFlags) {
    if ((flags & bit) != 0) out.append(word).push_back(' ');
  }
  return out;
}

Frame jfr_frame(const json::Value& frame, const JfrFrameStyle& style) {
  Frame f;
  const json::Value* method = frame.find("method");
  std::string cls, name, descriptor;
  int64_t modifiers = 0;
  if (method != nullptr) {
    if (const json::Value* type = method->find("type")) cls = type->get_string("name");
    name = method->get_string("name");
    descriptor = method->get_string("descriptor");
    if (const json::Value* m = method->find("modifiers"); m != nullptr && m->is_number())
      modifiers = m->as_int(0);
  }
  if (const json::Value* line = frame.find("lineNumber"); line != nullptr && line->is_number()) {
    int64_t n = line->as_int(0);
    if (n > 0 && n < (1ll << 31)) f.line = static_cast<uint32_t>(n);
  }
  f.name = cls.empty() && name.empty()
               ? "[unknown]"
               : java_frame_name(cls, name, descriptor, style.line_numbers ? f.line : 0);
  if (style.method_modifiers && f.name != "[unknown]")
    f.name = java_method_modifiers(modifiers) + f.name;
  f.kind =
      frame.get_string("type") == "Inlined" ? model::FrameKind::inlined : model::FrameKind::java;
  return f;
}

namespace {

// The event's stack, root first, with the thread named in `thread_key`; count 1.
Result<Stack> event_stack(const json::Value& event, std::string_view thread_key,
                          const JfrFrameStyle& style) {
  const json::Value* values = event.find("values");
  const json::Value* frames = values ? path(*values, {"stackTrace", "frames"}) : nullptr;
  if (frames == nullptr || !frames->is_array()) return make_error("event without a stack trace");
  Stack s;
  s.count = 1;
  if (const json::Value* thread = values->find(thread_key); thread && thread->is_object()) {
    if (const json::Value* tid = thread->find("osThreadId")) {
      s.tid = static_cast<int32_t>(tid->as_int(0));
    }
    s.thread_name = thread->get_string("javaName", thread->get_string("osName"));
  }
  // JFR lists the leaf first; gp stacks are root first.
  for (auto it = frames->items.rbegin(); it != frames->items.rend(); ++it) {
    s.frames.push_back(jfr_frame(*it, style));
  }
  return s;
}

constexpr std::string_view kAllocationSample = "jdk.ObjectAllocationSample";
constexpr std::string_view kInNewTlab = "jdk.ObjectAllocationInNewTLAB";
constexpr std::string_view kOutsideTlab = "jdk.ObjectAllocationOutsideTLAB";

}  // namespace

Result<Stack> jfr_sample(const json::Value& event, const JfrFrameStyle& style) {
  return event_stack(event, "sampledThread", style);
}

std::string java_class_name(std::string_view internal) {
  size_t dims = 0;
  while (dims < internal.size() && internal[dims] == '[') ++dims;
  std::string_view element = internal.substr(dims);
  std::string out;
  if (dims > 0 && element.size() == 1) {
    switch (element[0]) {
      case 'B':
        out = "byte";
        break;
      case 'C':
        out = "char";
        break;
      case 'D':
        out = "double";
        break;
      case 'F':
        out = "float";
        break;
      case 'I':
        out = "int";
        break;
      case 'J':
        out = "long";
        break;
      case 'S':
        out = "short";
        break;
      case 'Z':
        out = "boolean";
        break;
      default:
        out = element;
    }
  } else {
    if (dims > 0 && element.size() >= 2 && element.front() == 'L' && element.back() == ';')
      element = element.substr(1, element.size() - 2);
    out = element;
    for (char& c : out) c = c == '/' ? '.' : c;
  }
  for (size_t i = 0; i < dims; ++i) out += "[]";
  return out;
}

Result<Stack> jfr_allocation(const json::Value& event, const JfrFrameStyle& style) {
  std::string type = event.get_string("type");
  const char* weight_key = type == kAllocationSample ? "weight"
                           : type == kInNewTlab      ? "tlabSize"
                           : type == kOutsideTlab    ? "allocationSize"
                                                     : nullptr;
  if (weight_key == nullptr) return make_error("not an allocation event: " + type);
  auto s = event_stack(event, "eventThread", style);
  if (!s) return s.error();
  const json::Value* values = event.find("values");
  const json::Value* weight = values->find(weight_key);
  int64_t bytes = weight != nullptr && weight->is_number() ? weight->as_int(0) : 0;
  s->count = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  Frame cls;
  const json::Value* object_class = values->find("objectClass");
  std::string name = object_class != nullptr && object_class->is_object()
                         ? object_class->get_string("name")
                         : std::string();
  cls.name = name.empty() ? "[unknown]" : java_class_name(name);
  cls.kind = type == kOutsideTlab ? model::FrameKind::kernel : model::FrameKind::inlined;
  s->frames.push_back(std::move(cls));
  return s;
}

Result<JfrReadStats> read_jfr_json(std::istream& in, StackTable& table, JfrEvents which,
                                   const JfrFrameStyle& style) {
  JfrReadStats stats, tlab_stats;
  StackTable tlab_table;  // TLAB events, kept unless the recording has sampled allocations
  EventSplitter splitter;
  auto on_event = [&](const std::string& text) {
    auto event = json::parse(text);
    if (!event) {
      ++stats.bad;
      return;
    }
    std::string type = event->get_string("type");
    bool tlab = type == kInNewTlab || type == kOutsideTlab;
    bool wanted = which == JfrEvents::execution ? type == "jdk.ExecutionSample"
                                                : tlab || type == kAllocationSample;
    if (!wanted) return;
    auto stack =
        which == JfrEvents::execution ? jfr_sample(*event, style) : jfr_allocation(*event, style);
    JfrReadStats& st = tlab ? tlab_stats : stats;
    if (!stack) {
      ++st.bad;
      return;
    }
    ++st.events;
    const json::Value* truncated = path(*event, {"values", "stackTrace", "truncated"});
    if (truncated != nullptr && truncated->boolean) ++st.truncated;
    (tlab ? tlab_table : table).add(std::move(*stack));
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
  if (stats.events == 0 && tlab_stats.events > 0) {
    for (Stack& s : tlab_table.take()) table.add(std::move(s));
    tlab_stats.bad += stats.bad;
    return tlab_stats;
  }
  return stats;
}

}  // namespace gp::runtime::java
