#pragma once
// Line iteration shared by the spy parsers: splits on '\n', drops a trailing '\r' and trailing
// blanks, and keeps the final line even without a newline (a tool killed mid-write).

#include <string_view>

namespace gp::runtime::spies {

template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    fn(line);
    start = end + 1;
  }
}

}  // namespace gp::runtime::spies
