// Ruby struct layouts (see ruby_layout.h).
#include "runtime/ruby/ruby_layout.h"

#include <charconv>

namespace gp::runtime::ruby {
namespace {

// The generated tables (scripts/gen-interp-layouts.sh), oldest version first.
const RubyLayout kLayouts[] = {
#include "runtime/ruby/ruby_layouts.inc"
};

}  // namespace

std::optional<RubyVersion> parse_ruby_version(std::string_view text) {
  RubyVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.teeny};
  for (int i = 0; i < 3; ++i) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *parts[i]);
    if (ec != std::errc() || p == text.data()) return std::nullopt;
    text.remove_prefix(static_cast<size_t>(p - text.data()));
    if (i < 2) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
  }
  if (!text.empty()) return std::nullopt;
  return v;
}

std::optional<RubyLayout> layout_for_version(const RubyVersion& v) {
  for (const RubyLayout& l : kLayouts) {
    if (l.major == v.major && l.minor == v.minor) return l;
  }
  return std::nullopt;
}

std::string supported_versions() {
  std::string out;
  for (const RubyLayout& l : kLayouts) {
    if (!out.empty()) out += ", ";
    out += std::to_string(l.major) + "." + std::to_string(l.minor);
  }
  return out;
}

}  // namespace gp::runtime::ruby
