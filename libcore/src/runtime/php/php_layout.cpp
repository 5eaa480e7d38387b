// PHP versions and per-version Zend layouts (see php_layout.h for where the numbers come from).
#include "runtime/php/php_layout.h"

#include <cctype>

namespace gp::runtime::php {
namespace {

// Parses up to three digits at s[i]; false when there is none.
bool number(std::string_view s, size_t& i, int& out) {
  size_t start = i;
  out = 0;
  while (i < s.size() && i - start < 3 && std::isdigit(static_cast<unsigned char>(s[i]))) {
    out = out * 10 + (s[i++] - '0');
  }
  return i > start;
}

// One row per PHP version, generated from its headers (see php_layout.h), in the order of
// PhpLayout's fields.
constexpr PhpLayout kLayouts[] = {
#include "runtime/php/php_layouts.inc"
};

}  // namespace

std::string PhpVersion::text() const {
  std::string t = std::to_string(major) + "." + std::to_string(minor);
  if (micro >= 0) t += "." + std::to_string(micro);
  return t;
}

std::optional<PhpVersion> version_from_rodata(std::string_view rodata) {
  constexpr std::string_view kMarker = "X-Powered-By: PHP/";
  size_t at = rodata.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view s = rodata.substr(at + kMarker.size(), 16);
  PhpVersion v;
  size_t i = 0;
  if (!number(s, i, v.major) || i >= s.size() || s[i++] != '.' || !number(s, i, v.minor)) {
    return std::nullopt;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!number(s, i, v.micro)) v.micro = -1;
  }
  return v;
}

std::optional<PhpLayout> layout_for_version(int major, int minor) {
  for (const PhpLayout& l : kLayouts) {
    if (l.major == major && l.minor == minor) return l;
  }
  return std::nullopt;
}

bool rodata_has_api(std::string_view rodata, const PhpLayout& layout) {
  std::string id = "API" + std::to_string(layout.api_no) + ",";
  return rodata.find(id) != std::string_view::npos;
}

std::string_view supported_versions() {
  static const std::string text = [] {
    std::string t;
    for (const PhpLayout& l : kLayouts) {
      if (!t.empty()) t += ", ";
      t += std::to_string(l.major) + "." + std::to_string(l.minor);
    }
    return t;
  }();
  return text;
}

}  // namespace gp::runtime::php
