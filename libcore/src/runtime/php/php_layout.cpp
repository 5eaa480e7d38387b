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

PhpLayout layout_82() {
  PhpLayout l;
  l.major = 8;
  l.minor = 2;
  l.eg_current_execute_data = 488;
  l.ex_opline = 0;
  l.ex_func = 24;
  l.ex_prev = 48;
  l.ex_size = 56;
  l.fn_type = 0;
  l.fn_name = 8;
  l.fn_scope = 16;
  l.fn_filename = 152;
  l.fn_line_start = 160;
  l.fn_size = 168;
  l.op_lineno = 24;
  l.str_len = 16;
  l.str_val = 24;
  l.ce_name = 8;
  return l;
}

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
  if (major == 8 && minor == 2) return layout_82();
  return std::nullopt;
}

std::string_view supported_versions() { return "8.2"; }

}  // namespace gp::runtime::php
