#include "gp/symbolize/demangle.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>

// libiberty.h declares basename() unless told the C library does (glibc's C++ overloads clash).
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

namespace gp::symbolize {
namespace {

bool starts_with(std::string_view s, size_t i, std::string_view what) {
  return s.substr(i, what.size()) == what;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// At s[i] == 'o' of a whole-word "operator": copies the operator name (with its punctuation, so
// the `<` of `operator<` is not taken for a template) and returns the index after it.
size_t copy_operator(std::string_view s, size_t i, std::string& out) {
  out += "operator";
  i += 8;
  if (starts_with(s, i, "()") || starts_with(s, i, "[]")) {
    out += s.substr(i, 2);
    return i + 2;
  }
  while (i < s.size() && std::strchr("<>=!+-*/%&|^~,", s[i]) != nullptr) out += s[i++];
  return i;
}

bool at_operator(std::string_view s, size_t i) {
  return starts_with(s, i, "operator") && (i == 0 || !is_ident_char(s[i - 1])) &&
         (i + 8 >= s.size() || !is_ident_char(s[i + 8]));
}

// Index after the group opened at s[i] (`(` or `<`), honouring nesting of both kinds.
size_t skip_group(std::string_view s, size_t i) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    if (at_operator(s, i)) {
      std::string ignored;
      i = copy_operator(s, i, ignored) - 1;
      continue;
    }
    char c = s[i];
    if (c == '(' || c == '<') ++depth;
    if ((c == ')' || c == '>') && --depth == 0) return i + 1;
  }
  return s.size();
}

// Demangles with libiberty (the demangler of binutils and gdb): C++ (the Itanium ABI, as
// abi::__cxa_demangle prints it), Rust legacy (hash and `$LT$` escapes dropped) and Rust v0.
// `params` false prints only the name: no parameters, qualifiers or return type.
std::optional<std::string> libiberty_demangle(const std::string& mangled, bool params, bool* rust) {
  const int options = DMGL_ANSI | (params ? DMGL_PARAMS : 0);
  char* out = rust_demangle(mangled.c_str(), options);
  *rust = out != nullptr;
  if (out == nullptr) out = cplus_demangle(mangled.c_str(), options | DMGL_GNU_V3);
  if (out == nullptr) return std::nullopt;
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace

std::string strip_templates(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (at_operator(s, i)) {
      i = copy_operator(s, i, out);
      continue;
    }
    if (s[i] == '<') {
      i = skip_group(s, i);
      continue;
    }
    out += s[i++];
  }
  return out;
}

std::string demangle(std::string_view name, DemangleMode mode) {
  if (mode == DemangleMode::none || !(starts_with(name, 0, "_Z") || starts_with(name, 0, "_R")))
    return std::string(name);
  // PLT stubs are named "<symbol>@plt" (as perf does): demangle the symbol, keep the suffix.
  if (name.size() > 4 && name.substr(name.size() - 4) == "@plt")
    return demangle(name.substr(0, name.size() - 4), mode) + "@plt";
  bool rust = false;
  auto out = libiberty_demangle(std::string(name), mode == DemangleMode::full, &rust);
  if (!out) return std::string(name);
  // Rust names have no parameters to drop; simplified drops their generic arguments.
  return mode == DemangleMode::simplified ? strip_templates(*out) : *out;
}

bool parse_demangle_mode(std::string_view text, DemangleMode* out) {
  if (text == "none") *out = DemangleMode::none;
  else if (text == "simplified") *out = DemangleMode::simplified;
  else if (text == "templates") *out = DemangleMode::templates;
  else if (text == "full") *out = DemangleMode::full;
  else return false;
  return true;
}

}  // namespace gp::symbolize
