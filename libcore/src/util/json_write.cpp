// JSON writer in Python json.dumps' default shape: ", " and ": " separators, no spaces inside
// brackets, ensure_ascii \uXXXX escapes (lowercase hex, surrogate pairs above U+FFFF).
#include <cstdio>

#include "gp/util/json.h"
#include "util/utf8.h"

namespace gp::json {
namespace {

void append_u_escape(uint32_t unit, std::string& out) {
  char buf[12];  // room for any uint32_t, though callers pass UTF-16 code units
  std::snprintf(buf, sizeof buf, "\\u%04x", unit);
  out += buf;
}

struct Separators {
  const char* item;
  const char* key;
};
constexpr Separators kDefault{", ", ": "}, kCompact{",", ":"};

void write(const Value& v, std::string& out, bool ensure_ascii, const Separators& sep = kDefault) {
  switch (v.type) {
    case Type::null:
      out += "null";
      return;
    case Type::boolean:
      out += v.boolean ? "true" : "false";
      return;
    case Type::number:
      out += v.text;
      return;
    case Type::string:
      append_quoted(v.text, out, ensure_ascii);
      return;
    case Type::array: {
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i != 0) out += sep.item;
        write(v.items[i], out, ensure_ascii, sep);
      }
      out += ']';
      return;
    }
    case Type::object: {
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i != 0) out += sep.item;
        append_quoted(v.members[i].first, out, ensure_ascii);
        out += sep.key;
        write(v.members[i].second, out, ensure_ascii, sep);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

void append_quoted(std::string_view s, std::string& out, const QuoteStyle& style) {
  out += '"';
  size_t pos = 0;
  while (pos < s.size()) {
    uint32_t cp = util::next_code_point(s, pos);
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      default:
        break;
    }
    if (!style.script_safe) {
      switch (cp) {
        case '\n':
          out += "\\n";
          continue;
        case '\r':
          out += "\\r";
          continue;
        case '\t':
          out += "\\t";
          continue;
        case '\b':
          out += "\\b";
          continue;
        case '\f':
          out += "\\f";
          continue;
        default:
          break;
      }
    }
    const bool script_char = style.script_safe && (cp == '<' || cp == '>' || cp == '&');
    if (cp < 0x20 || script_char || (style.escape_del && cp == 0x7F) ||
        (style.ensure_ascii && cp >= 0x7F)) {
      if (cp >= 0x10000) {
        uint32_t v = cp - 0x10000;
        append_u_escape(0xD800 + (v >> 10), out);
        append_u_escape(0xDC00 + (v & 0x3FF), out);
      } else {
        append_u_escape(cp, out);
      }
      continue;
    }
    util::append_utf8(cp, out);
  }
  out += '"';
}

void dump(const Value& v, std::string& out) { write(v, out, true); }

std::string dump(const Value& v) {
  std::string out;
  write(v, out, true);
  return out;
}

std::string dump_compact(const Value& v) {
  std::string out;
  write(v, out, true, kCompact);
  return out;
}

std::string dump_utf8(const Value& v) {
  std::string out;
  write(v, out, false);
  return out;
}

}  // namespace gp::json
