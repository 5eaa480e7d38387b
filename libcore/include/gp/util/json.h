#pragma once
// A small JSON value, parser and writer (no dependency): enough for gProfiler `.col` headers,
// app-metadata dicts and upload bodies. The writer reproduces Python's `json.dumps` defaults
// (separators ", " and ": ", ensure_ascii escaping) so headers match gProfiler byte for byte.
//
// Numbers keep their literal text, so a parsed document is written back unchanged (no float
// reformatting). Object members keep their order; equality is Python's (order-insensitive
// dicts, 1 == 1.0).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gp/util/result.h"

namespace gp::json {

enum class Type : uint8_t { null, boolean, number, string, array, object };

struct Value {
  Type type = Type::null;
  bool boolean = false;
  std::string text;          // the UTF-8 string, or the number's literal text
  std::vector<Value> items;  // array elements
  std::vector<std::pair<std::string, Value>> members;  // object members, in order

  // Declared here, defaulted in json.cpp where Value is complete: clang (the libFuzzer builds)
  // would otherwise instantiate the member vectors of this recursive type too early.
  Value();
  ~Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;

  static Value null();
  static Value from_bool(bool b);
  static Value from_string(std::string s);
  static Value from_int(int64_t v);
  static Value from_uint(uint64_t v);
  // Python repr of a float (shortest round-trip digits, "1.0" for integral values).
  static Value from_double(double v);
  static Value array();
  static Value object();

  bool is_null() const { return type == Type::null; }
  bool is_object() const { return type == Type::object; }
  bool is_array() const { return type == Type::array; }
  bool is_string() const { return type == Type::string; }
  bool is_number() const { return type == Type::number; }

  // Member lookup (objects only; nullptr when absent or not an object).
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Replaces the member's value, or appends the member.
  void set(std::string_view key, Value v);
  // Removes a member if present.
  void erase(std::string_view key);
  void push_back(Value v);

  // The number's value (0 when not a number).
  double as_double() const;
  // The number as an integer when it is one exactly; `fallback` otherwise.
  int64_t as_int(int64_t fallback = 0) const;
  // The string member `key`, or `fallback`.
  std::string get_string(std::string_view key, std::string_view fallback = {}) const;

  friend bool operator==(const Value& a, const Value& b);
};

inline Value Value::null() { return {}; }
inline void Value::push_back(Value v) { items.push_back(std::move(v)); }

struct ParseLimits {
  size_t max_depth = 256;
};

// Parses one JSON document (surrounding whitespace allowed). Accepts Python's NaN/Infinity
// literals. The error says what was expected at which byte offset.
Result<Value> parse(std::string_view text, ParseLimits limits = {});

// Python `json.dumps(v)` with default arguments.
std::string dump(const Value& v);

// Removes, at every depth, each object member whose key contains `needle` (ASCII
// case-insensitive). Used to keep tokens out of every .col header and upload (gprofiler.md §13).
void remove_keys_containing(Value& v, std::string_view needle);
void dump(const Value& v, std::string& out);
// Python `json.dumps(v, separators=(",", ":"))`: compact, ASCII (glogger's log records).
std::string dump_compact(const Value& v);
// Python `json.dumps(v, ensure_ascii=False)`: non-ASCII stays UTF-8 (upload bodies).
std::string dump_utf8(const Value& v);
// How a JSON string literal is spelled; append_quoted is the one JSON string escaper of gp
// (the JSON writer, the speedscope encoder and the flame page all use it).
struct QuoteStyle {
  bool ensure_ascii = true;  // every non-ASCII character as \uXXXX (Python's json.dumps default)
  bool escape_del = false;   // DEL as \u007f too
  // Safe inside an HTML <script> element: '<', '>' and '&' as \u003c \u003e \u0026, and every
  // control character as \u00XX (no short forms such as \n).
  bool script_safe = false;
};

// A quoted, escaped JSON string literal. Invalid UTF-8 bytes become U+FFFD.
void append_quoted(std::string_view s, std::string& out, const QuoteStyle& style);
inline void append_quoted(std::string_view s, std::string& out, bool ensure_ascii = true) {
  append_quoted(s, out, QuoteStyle{ensure_ascii, false, false});
}

}  // namespace gp::json
