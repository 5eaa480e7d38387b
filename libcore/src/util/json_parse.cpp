// JSON parser: recursive descent with a depth limit; never trusts its input.
#include <cstring>
#include <string>
#include <unordered_map>

#include "gp/util/json.h"
#include "util/utf8.h"

namespace gp::json {
namespace {

class Parser {
 public:
  Parser(std::string_view text, ParseLimits limits) : s_(text), limits_(limits) {}

  Result<Value> document() {
    Value v;
    if (!value(v, 0)) return fail();
    skip_ws();
    if (pos_ != s_.size()) {
      error_ = "unexpected data after the JSON value";
      return fail();
    }
    return v;
  }

 private:
  Error fail() const {
    return make_error("invalid JSON at byte " + std::to_string(pos_) + ": " + error_);
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool value(Value& out, size_t depth) {
    if (depth > limits_.max_depth) {
      error_ = "nesting deeper than " + std::to_string(limits_.max_depth);
      return false;
    }
    skip_ws();
    if (pos_ >= s_.size()) {
      error_ = "unexpected end of input";
      return false;
    }
    char c = s_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out.type = Type::string;
      return string(out.text);
    }
    if (literal("null")) return true;
    if (literal("true")) {
      out = Value::from_bool(true);
      return true;
    }
    if (literal("false")) {
      out = Value::from_bool(false);
      return true;
    }
    return number(out);
  }

  bool number(Value& out) {
    size_t start = pos_;
    for (std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
      if (literal(word)) {
        out.type = Type::number;
        out.text = std::string(word);
        return true;
      }
    }
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    size_t int_start = pos_;
    while (pos_ < s_.size() && isdigit(s_[pos_])) ++pos_;
    size_t int_len = pos_ - int_start;
    if (int_len == 0 || (int_len > 1 && s_[int_start] == '0')) {
      pos_ = start;
      error_ = "expected a value";
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return false;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return false;
    }
    out.type = Type::number;
    out.text = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  bool digits() {
    size_t start = pos_;
    while (pos_ < s_.size() && isdigit(s_[pos_])) ++pos_;
    if (pos_ == start) error_ = "expected a digit";
    return pos_ != start;
  }

  static bool isdigit(char c) { return c >= '0' && c <= '9'; }

  bool hex4(uint32_t& cp) {
    if (s_.size() - pos_ < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= c - '0';
      else if (c >= 'a' && c <= 'f') cp |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') cp |= c - 'A' + 10;
      else return false;
    }
    return true;
  }

  bool escape(std::string& out) {
    char c = s_[pos_++];
    switch (c) {
      case '"':
        out += '"';
        return true;
      case '\\':
        out += '\\';
        return true;
      case '/':
        out += '/';
        return true;
      case 'b':
        out += '\b';
        return true;
      case 'f':
        out += '\f';
        return true;
      case 'n':
        out += '\n';
        return true;
      case 'r':
        out += '\r';
        return true;
      case 't':
        out += '\t';
        return true;
      case 'u':
        break;
      default:
        error_ = "invalid escape";
        return false;
    }
    uint32_t cp = 0;
    if (!hex4(cp)) {
      error_ = "invalid \\u escape";
      return false;
    }
    // A high surrogate followed by \uDC00-\uDFFF is one code point; a lone one becomes U+FFFD.
    if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
      size_t save = pos_;
      pos_ += 2;
      uint32_t lo = 0;
      if (hex4(lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else {
        pos_ = save;
      }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
    util::append_utf8(cp, out);
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        error_ = "control character in string";
        return false;
      }
      if (c == '\\') {
        ++pos_;
        if (pos_ >= s_.size()) break;
        if (!escape(out)) return false;
        continue;
      }
      if (static_cast<unsigned char>(c) >= 0x80) {
        // Strings hold valid UTF-8: a byte that is not part of it becomes U+FFFD here, as the
        // writer would print it, so two keys that differ only in such bytes are one key.
        util::append_utf8(util::next_code_point(s_, pos_), out);
        continue;
      }
      out += c;
      ++pos_;
    }
    error_ = "unterminated string";
    return false;
  }

  bool array(Value& out, size_t depth) {
    out = Value::array();
    ++pos_;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      Value item;
      if (!value(item, depth + 1)) return false;
      out.items.push_back(std::move(item));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      error_ = "expected ',' or ']'";
      return false;
    }
  }

  bool object(Value& out, size_t depth) {
    out = Value::object();
    // Where each key is in out.members: duplicates found in constant time (Value::set scans
    // the members, which made a 40,000-key object take 1.6 s).
    std::unordered_map<std::string, size_t> index;
    ++pos_;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_ws();
      std::string key;
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        error_ = "expected a string key";
        return false;
      }
      if (!string(key)) return false;
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') {
        error_ = "expected ':'";
        return false;
      }
      ++pos_;
      Value v;
      if (!value(v, depth + 1)) return false;
      // Python keeps the last duplicate, in the place of the first.
      auto [it, added] = index.try_emplace(key, out.members.size());
      if (added) out.members.emplace_back(std::move(key), std::move(v));
      else out.members[it->second].second = std::move(v);
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      error_ = "expected ',' or '}'";
      return false;
    }
  }

  std::string_view s_;
  ParseLimits limits_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

Result<Value> parse(std::string_view text, ParseLimits limits) {
  return Parser(text, limits).document();
}

}  // namespace gp::json
