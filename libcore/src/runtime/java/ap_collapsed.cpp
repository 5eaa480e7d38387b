// async-profiler collapsed output → gp stacks (see ap_collapsed.h).
#include "ap_collapsed.h"

#include <charconv>

namespace gp::runtime::java {
namespace {

using model::FrameKind;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "[main tid=1234]" or "[tid=1234]" (the -t thread frame): sets tid and name.
bool thread_frame(std::string_view text, Stack& s) {
  if (text.size() < 7 || text.front() != '[' || text.back() != ']') return false;
  size_t at = text.rfind("tid=");
  if (at == std::string_view::npos || (at != 1 && text[at - 1] != ' ')) return false;
  std::string_view digits = text.substr(at + 4, text.size() - at - 5);
  int32_t tid = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), tid);
  if (ec != std::errc() || end != digits.data() + digits.size()) return false;
  s.tid = tid;
  s.thread_name = at > 1 ? std::string(text.substr(1, at - 2)) : std::string();
  return true;
}

}  // namespace

Frame ap_frame(std::string_view text) {
  struct Suffix {
    std::string_view text;
    FrameKind kind;
  };
  static constexpr Suffix kSuffixes[] = {{"_[j]", FrameKind::java},
                                         {"_[0]", FrameKind::java},
                                         {"_[1]", FrameKind::java},
                                         {"_[i]", FrameKind::inlined},
                                         {"_[k]", FrameKind::kernel}};
  Frame f;
  f.kind = FrameKind::native;
  for (const auto& s : kSuffixes) {
    if (text.size() > s.text.size() && ends_with(text, s.text)) {
      f.kind = s.kind;
      text.remove_suffix(s.text.size());
      break;
    }
  }
  f.name = std::string(text);
  return f;
}

CollapsedStats read_ap_collapsed(std::string_view text, StackTable& table) {
  CollapsedStats stats;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    size_t space = line.rfind(' ');
    uint64_t count = 0;
    auto [end, ec] =
        space == std::string_view::npos
            ? std::from_chars_result{nullptr, std::errc::invalid_argument}
            : std::from_chars(line.data() + space + 1, line.data() + line.size(), count);
    if (space == std::string_view::npos || space == 0 || ec != std::errc() ||
        end != line.data() + line.size() || count == 0) {
      ++stats.bad_lines;
      continue;
    }
    Stack s;
    s.count = count;
    std::string_view frames = line.substr(0, space);
    bool first = true;
    size_t start = 0;
    while (start <= frames.size()) {
      size_t semi = frames.find(';', start);
      if (semi == std::string_view::npos) semi = frames.size();
      std::string_view frame = frames.substr(start, semi - start);
      start = semi + 1;
      if (first && thread_frame(frame, s)) {
        first = false;
        continue;
      }
      first = false;
      if (!frame.empty()) s.frames.push_back(ap_frame(frame));
    }
    ++stats.lines;
    table.add(std::move(s));
  }
  return stats;
}

}  // namespace gp::runtime::java
