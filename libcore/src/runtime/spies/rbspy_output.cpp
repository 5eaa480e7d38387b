// rbspy's collapsed output → stacks (spy_output.h).
#include <charconv>

#include "runtime/spies/spy_output.h"
#include "runtime/spies/text_lines.h"

namespace gp::runtime::spies {
namespace {

std::vector<Frame> parse_frames(std::string_view stack) {
  std::vector<Frame> frames;
  size_t start = 0;
  while (start <= stack.size()) {
    size_t end = stack.find(';', start);
    if (end == std::string_view::npos) end = stack.size();
    std::string_view text = stack.substr(start, end - start);
    if (text.empty()) return {};  // "a;;b" or a leading/trailing ';': not rbspy's output
    frames.push_back(parse_rbspy_frame(text));
    start = end + 1;
  }
  return frames;
}

}  // namespace

void SpyOutput::problem(std::string what) {
  if (skipped++ == 0) first_problem = std::move(what);
}

Frame parse_rbspy_frame(std::string_view text) {
  Frame f;
  f.kind = model::FrameKind::ruby;
  f.name = std::string(text);
  // "NAME - PATH:LINE": the name may itself contain " - " (rare), the path may contain ':' —
  // so the last " - " starts the location and the last ':' its line.
  size_t dash = text.rfind(" - ");
  if (dash == std::string_view::npos) return f;
  std::string_view where = text.substr(dash + 3);
  size_t colon = where.rfind(':');
  uint32_t line = 0;
  if (colon != std::string_view::npos) {
    std::string_view digits = where.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), line);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) {
      where = where.substr(0, colon);
    } else {
      line = 0;
    }
  }
  // rbspy names frames it cannot place "(unknown)" (older versions: "unknown").
  if (where != "(unknown)" && where != "unknown") f.file = std::string(where);
  f.line = line;
  return f;
}

SpyOutput parse_rbspy_collapsed(std::string_view text) {
  SpyOutput out;
  size_t number = 0;
  for_each_line(text, [&](std::string_view line) {
    ++number;
    if (line.empty()) return;
    size_t space = line.rfind(' ');
    uint64_t count = 0;
    if (space == std::string_view::npos || space == 0) {
      out.problem("line " + std::to_string(number) + ": no sample count");
      return;
    }
    std::string_view digits = line.substr(space + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || end != digits.data() + digits.size() || count == 0) {
      out.problem("line " + std::to_string(number) + ": bad sample count '" + std::string(digits) +
                  "'");
      return;
    }
    std::vector<Frame> frames = parse_frames(line.substr(0, space));
    if (frames.empty()) {
      out.problem("line " + std::to_string(number) + ": empty frame");
      return;
    }
    Stack& st = out.stacks.emplace_back();
    st.frames = std::move(frames);
    st.count = count;
  });
  return out;
}

}  // namespace gp::runtime::spies
