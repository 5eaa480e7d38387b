// escape_for_terminal (gp/util/escape.h).
#include "gp/util/escape.h"

#include <cstdio>

#include "util/utf8.h"

namespace gp::util {
namespace {

void hex_byte(unsigned char b, std::string& out) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", b);
  out += buf;
}

}  // namespace

std::string escape_for_terminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const auto b = static_cast<unsigned char>(text[pos]);
    if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++pos;
      continue;
    }
    if (b < 0x80) {
      switch (b) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case 0x1b:
          out += "\\e";
          break;
        default:
          hex_byte(b, out);
      }
      ++pos;
      continue;
    }
    const size_t start = pos;
    const uint32_t cp = next_code_point(text, pos);
    if (pos == start + 1 || (cp >= 0x80 && cp <= 0x9f)) {  // not UTF-8, or a C1 control
      for (size_t i = start; i < pos; ++i) hex_byte(static_cast<unsigned char>(text[i]), out);
      continue;
    }
    out.append(text.substr(start, pos - start));
  }
  return out;
}

}  // namespace gp::util
