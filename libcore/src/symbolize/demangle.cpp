#include "gp/symbolize/demangle.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

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

size_t skip_qualifiers(std::string_view s, size_t i) {
  static const std::string_view kQualifiers[] = {" const", " volatile", " &&", " &", " noexcept"};
  for (bool more = true; more;) {
    more = false;
    for (auto q : kQualifiers) {
      if (starts_with(s, i, q) && (i + q.size() >= s.size() || !is_ident_char(s[i + q.size()]))) {
        i += q.size();
        more = true;
      }
    }
  }
  return i;
}

// Drops a leading return type ("void ns::f<int>" -> "ns::f<int>"): the text before the last
// top-level space, unless that space belongs to "operator new" / "operator int".
std::string strip_return_type(const std::string& s) {
  int depth = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (at_operator(s, i)) break;  // nothing after an operator name is a return type boundary
    char c = s[i];
    if (c == '(' || c == '<' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == '}' || c == ']') --depth;
    if (c == ' ' && depth == 0) cut = i;
  }
  return cut == std::string::npos ? s : s.substr(cut + 1);
}

bool is_rust_legacy(std::string_view mangled) {
  // _ZN ... 17h<16 hex digits>E
  if (mangled.size() < 24 || !starts_with(mangled, 0, "_ZN") || mangled.back() != 'E') return false;
  std::string_view tail = mangled.substr(mangled.size() - 20, 19);
  if (!starts_with(tail, 0, "17h")) return false;
  for (char c : tail.substr(3))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string rust_unescape(std::string_view s) {
  static const struct {
    std::string_view from, to;
  } kEscapes[] = {{"$SP$", "@"},  {"$BP$", "*"},  {"$RF$", "&"},  {"$LT$", "<"},  {"$GT$", ">"},
                  {"$LP$", "("},  {"$RP$", ")"},  {"$C$", ","},   {"$u7e$", "~"}, {"$u20$", " "},
                  {"$u27$", "'"}, {"$u5b$", "["}, {"$u5d$", "]"}, {"$u7b$", "{"}, {"$u7d$", "}"},
                  {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u22$", "\""}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool done = false;
    if (s[i] == '$') {
      for (const auto& e : kEscapes) {
        if (starts_with(s, i, e.from)) {
          out += e.to;
          i += e.from.size();
          done = true;
          break;
        }
      }
    } else if (starts_with(s, i, "..")) {
      out += "::";
      i += 2;
      done = true;
    } else if (s[i] == '_' && starts_with(s, i, "_$") && (i == 0 || s[i - 1] == ':')) {
      ++i;  // a leading `_` only protects a `$` escape
      done = true;
    }
    if (!done) out += s[i++];
  }
  return out;
}

std::string cxa_demangle(std::string_view name, bool* ok) {
  std::string mangled(name);
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  *ok = status == 0 && out != nullptr;
  std::string result = *ok ? std::string(out) : mangled;
  std::free(out);
  return result;
}

}  // namespace

std::string strip_parameters(std::string_view s) {
  std::string out;
  int angle = 0, brace = 0;
  for (size_t i = 0; i < s.size();) {
    if (at_operator(s, i)) {
      i = copy_operator(s, i, out);
      continue;
    }
    char c = s[i];
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (c == '{') ++brace;
    if (c == '}') --brace;
    if (c == '(' && angle == 0 && brace == 0 && !starts_with(s, i, "(anonymous namespace)")) {
      i = skip_qualifiers(s, skip_group(s, i));
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

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
  if (mode == DemangleMode::none || !starts_with(name, 0, "_Z")) return std::string(name);
  // PLT stubs are named "<symbol>@plt" (as perf does): demangle the symbol, keep the suffix.
  if (name.size() > 4 && name.substr(name.size() - 4) == "@plt")
    return demangle(name.substr(0, name.size() - 4), mode) + "@plt";
  bool ok = false;
  std::string full = cxa_demangle(name, &ok);
  if (!ok) return std::string(name);
  if (is_rust_legacy(name)) {
    // Drop "::h<16 hex>": the hash only disambiguates crate versions.
    full = rust_unescape(full.substr(0, full.size() - 19));
    return mode == DemangleMode::simplified ? strip_templates(full) : full;
  }
  switch (mode) {
    case DemangleMode::full: return full;
    case DemangleMode::templates: return strip_return_type(strip_parameters(full));
    case DemangleMode::simplified:
    default: return strip_return_type(strip_templates(strip_parameters(full)));
  }
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
