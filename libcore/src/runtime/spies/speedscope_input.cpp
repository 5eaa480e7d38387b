// A speedscope file, as dotnet-trace writes it → stacks (spy_output.h).
//
// Schema: https://github.com/jlfwong/speedscope/blob/main/src/lib/file-format-spec.ts.
// gProfiler (gprofiler/utils/speedscope.py) turns each evented profile into samples at the
// session frequency, but charges the time before an event to the stack *after* it, and rounds
// with random(); gp charges each interval to the stack that was open during it and carries the
// fractional remainder, so the result is right and repeatable.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>

#include "gp/util/json.h"
#include "runtime/spies/spy_output.h"

namespace gp::runtime::spies {
namespace {

using json::Value;

// speedscope numbers; dotnet-trace has been seen to write startValue as a string.
bool number(const Value* v, double& out) {
  if (v == nullptr) return false;
  if (v->is_number()) {
    out = v->as_double();
    return std::isfinite(out);
  }
  if (!v->is_string()) return false;
  const std::string& s = v->text;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

// Milliseconds per `unit`; 0 when the unit is not a time.
double unit_ms(std::string_view unit) {
  if (unit == "nanoseconds") return 1e-6;
  if (unit == "microseconds") return 1e-3;
  if (unit == "milliseconds") return 1.0;
  if (unit == "seconds") return 1e3;
  return 0;
}

class Converter {
 public:
  Converter(const Value& frames, double interval_ms, SpyOutput& out)
      : frames_(frames), interval_ms_(interval_ms), out_(out) {}

  void profile(const Value& p, size_t index) {
    where_ = "profile " + std::to_string(index) + ": ";
    std::string type = p.get_string("type");
    thread_name_ = p.get_string("name");
    weights_.clear();
    order_.clear();
    if (type == "evented") {
      evented(p);
    } else if (type == "sampled") {
      sampled(p);
    } else {
      return out_.problem(where_ + "unknown type '" + type + "'");
    }
    emit(p.get_string("unit") == "none" && type == "sampled");
  }

 private:
  bool valid_frame(const Value* v, size_t& index) {
    double d = 0;
    if (!number(v, d) || d < 0 || d != std::floor(d) || d >= frames_.items.size()) return false;
    index = static_cast<size_t>(d);
    return frames_.items[index].is_object() && frames_.items[index].find("name") != nullptr;
  }

  void add(const std::vector<size_t>& stack, double weight) {
    if (stack.empty() || weight <= 0) return;
    auto [it, inserted] = weights_.try_emplace(stack, 0.0);
    if (inserted) order_.push_back(stack);
    it->second += weight;
  }

  void evented(const Value& p);
  void sampled(const Value& p);
  void emit(bool counts);
  Frame frame(size_t index) const;

  const Value& frames_;
  double interval_ms_;
  SpyOutput& out_;
  std::string where_;
  std::string thread_name_;
  std::map<std::vector<size_t>, double> weights_;  // stack (root first) → time or count
  std::vector<std::vector<size_t>> order_;         // first-seen order, for stable output
  double scale_ = 1.0;                             // unit → milliseconds
};

void Converter::evented(const Value& p) {
  scale_ = unit_ms(p.get_string("unit"));
  const Value* events = p.find("events");
  double last = 0;
  if (scale_ == 0 || events == nullptr || !events->is_array() ||
      !number(p.find("startValue"), last))
    return out_.problem(where_ + "no time unit, startValue or events");
  std::vector<size_t> stack;
  for (const Value& e : events->items) {
    double at = 0;
    size_t f = 0;
    std::string type = e.get_string("type");
    if (!number(e.find("at"), at) || !valid_frame(e.find("frame"), f) ||
        (type != "O" && type != "C")) {
      out_.problem(where_ + "bad event");
      continue;
    }
    if (at < last) out_.problem(where_ + "event before the previous one");
    add(stack, at - last);
    last = std::max(last, at);
    if (type == "O") {
      stack.push_back(f);
      continue;
    }
    // A close must match the innermost open frame; recover from a missed close by popping to
    // the frame when it is open deeper, else skip the event.
    auto open = std::find(stack.rbegin(), stack.rend(), f);
    if (open == stack.rend()) {
      out_.problem(where_ + "close of a frame that is not open");
      continue;
    }
    if (open != stack.rbegin()) out_.problem(where_ + "close of a frame that is not innermost");
    stack.erase(std::prev(open.base()), stack.end());
  }
  double end = 0;
  if (number(p.find("endValue"), end) && end > last) add(stack, end - last);
}

void Converter::sampled(const Value& p) {
  const Value* samples = p.find("samples");
  const Value* weights = p.find("weights");
  std::string unit = p.get_string("unit");
  scale_ = unit == "none" ? 1.0 : unit_ms(unit);
  if (scale_ == 0 || samples == nullptr || weights == nullptr || !samples->is_array() ||
      !weights->is_array() || samples->items.size() != weights->items.size())
    return out_.problem(where_ + "samples, weights or unit missing or inconsistent");
  std::vector<size_t> stack;
  for (size_t i = 0; i < samples->items.size(); ++i) {
    const Value& s = samples->items[i];
    double w = 0;
    stack.clear();
    bool ok = s.is_array() && number(&weights->items[i], w) && w >= 0;
    for (size_t k = 0; ok && k < s.items.size(); ++k) {
      size_t f = 0;
      ok = valid_frame(&s.items[k], f);
      stack.push_back(f);
    }
    if (!ok) {
      out_.problem(where_ + "bad sample " + std::to_string(i));
      continue;
    }
    add(stack, w);
  }
}

Frame Converter::frame(size_t index) const {
  const Value& v = frames_.items[index];
  Frame f;
  f.kind = model::FrameKind::dotnet;
  f.name = v.get_string("name");
  f.file = v.get_string("file");
  double line = 0;
  if (number(v.find("line"), line) && line > 0 && line <= UINT32_MAX)
    f.line = static_cast<uint32_t>(line);
  return f;
}

// dotnet-trace names each thread's profile "Thread (TID)" (or with more text before).
int32_t thread_id(std::string_view name) {
  if (!name.ends_with(')')) return 0;
  size_t open = name.rfind('(');
  if (open == std::string_view::npos) return 0;
  std::string_view digits = name.substr(open + 1, name.size() - open - 2);
  int32_t tid = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), tid);
  return ec == std::errc() && end == digits.data() + digits.size() ? tid : 0;
}

void Converter::emit(bool counts) {
  double carry = 0;
  for (const auto& stack : order_) {
    double w = weights_[stack];
    uint64_t n = 0;
    if (counts) {
      n = static_cast<uint64_t>(std::llround(w));
    } else {
      carry += w * scale_ / interval_ms_;
      n = static_cast<uint64_t>(std::floor(carry));
      carry -= static_cast<double>(n);
    }
    if (n == 0) continue;
    Stack& st = out_.stacks.emplace_back();
    st.count = n;
    st.thread_name = thread_name_;
    st.tid = thread_id(thread_name_);
    for (size_t f : stack) st.frames.push_back(frame(f));
  }
}

}  // namespace

SpyOutput parse_speedscope(std::string_view json_text, int frequency_hz) {
  SpyOutput out;
  auto doc = json::parse(json_text);
  if (!doc) {
    out.problem("not JSON: " + doc.error().message);
    return out;
  }
  const Value* shared = doc->find("shared");
  const Value* frames = shared != nullptr ? shared->find("frames") : nullptr;
  const Value* profiles = doc->find("profiles");
  if (frames == nullptr || !frames->is_array() || profiles == nullptr || !profiles->is_array()) {
    out.problem("not a speedscope file (no shared.frames or profiles)");
    return out;
  }
  double interval_ms = 1000.0 / std::max(frequency_hz, 1);
  Converter conv(*frames, interval_ms, out);
  for (size_t i = 0; i < profiles->items.size(); ++i) conv.profile(profiles->items[i], i);
  return out;
}

}  // namespace gp::runtime::spies
