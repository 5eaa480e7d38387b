// py-spy raw output → adapter stacks (see py_spy_output.h).
#include "runtime/python/py_spy_output.h"

#include <charconv>

namespace gp::runtime::python {
namespace {

std::string_view strip_suffix(std::string_view text, std::string_view suffix, bool& had) {
  had = text.ends_with(suffix);
  return had ? text.substr(0, text.size() - suffix.size()) : text;
}

bool parse_number(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Frame parse_py_spy_frame(std::string_view text) {
  Frame f;
  bool native = false, python = false;
  text = strip_suffix(text, "_[pn]", native);
  if (!native) text = strip_suffix(text, "_[p]", python);
  f.kind = native ? model::FrameKind::python_native : model::FrameKind::python;
  // "name (file:line)": the location is the last parenthesised group.
  auto open = text.rfind(" (");
  if (!text.ends_with(')') || open == std::string_view::npos) {
    f.name = std::string(text);
    return f;
  }
  f.name = std::string(text.substr(0, open));
  std::string_view location = text.substr(open + 2, text.size() - open - 3);
  if (f.name == "thread" || f.name.starts_with("process ")) {
    f.kind = model::FrameKind::pseudo;
    f.name = std::string(text);
    return f;
  }
  auto colon = location.rfind(':');
  uint64_t line = 0;
  if (colon != std::string_view::npos && parse_number(location.substr(colon + 1), line)) {
    f.file = std::string(location.substr(0, colon));
    f.start_line = static_cast<uint32_t>(line);
  } else {
    f.file = std::string(location);
  }
  return f;
}

PySpyParse parse_py_spy_output(std::string_view text) {
  PySpyParse out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty()) continue;
    auto space = line.rfind(' ');
    uint64_t count = 0;
    if (space == std::string_view::npos || !parse_number(line.substr(space + 1), count) ||
        count == 0) {
      ++out.bad_lines;
      continue;
    }
    Stack stack;
    stack.count = count;
    std::string_view frames = line.substr(0, space);
    while (!frames.empty()) {
      auto semi = frames.find(';');
      std::string_view frame = frames.substr(0, semi);
      frames = semi == std::string_view::npos ? std::string_view() : frames.substr(semi + 1);
      if (!frame.empty()) stack.frames.push_back(parse_py_spy_frame(frame));
    }
    if (stack.frames.empty()) {
      ++out.bad_lines;
      continue;
    }
    out.stacks.push_back(std::move(stack));
  }
  return out;
}

}  // namespace gp::runtime::python
