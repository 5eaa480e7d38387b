#include "proc/json_lite.h"

#include <cctype>
#include <cstdint>

namespace gp::proc::json {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::optional<Value> document() {
    Value v;
    if (!value(v, 0)) return std::nullopt;
    skip_space();
    if (pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool value(Value& v, int depth) {
    if (depth > kMaxDepth) return false;
    skip_space();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.type = Value::Type::string;
      return string(v.text);
    }
    for (const char* word : {"true", "false"}) {
      if (literal(word)) {
        v.type = Value::Type::boolean;
        v.text = word;
        return true;
      }
    }
    if (literal("null")) return true;
    return number(v);
  }

  bool number(Value& v) {
    const size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' ||
            s_[pos_] == '+' || s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
    }
    if (pos_ == start) return false;
    v.type = Value::Type::number;
    v.text = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  bool object(Value& v, int depth) {
    v.type = Value::Type::object;
    ++pos_;
    if (eat('}')) return true;
    do {
      skip_space();
      std::string key;
      if (pos_ >= s_.size() || s_[pos_] != '"' || !string(key) || !eat(':')) return false;
      Value member;
      if (!value(member, depth + 1)) return false;
      v.members.emplace_back(std::move(key), std::move(member));
    } while (eat(','));
    return eat('}');
  }

  bool array(Value& v, int depth) {
    v.type = Value::Type::array;
    ++pos_;
    if (eat(']')) return true;
    do {
      Value item;
      if (!value(item, depth + 1)) return false;
      v.items.push_back(std::move(item));
    } while (eat(','));
    return eat(']');
  }

  bool hex4(uint32_t& out) {
    if (pos_ + 4 > s_.size()) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') out |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') out |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') out |= static_cast<uint32_t>(c - 'A' + 10);
      else return false;
    }
    return true;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
      switch (e) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          append_utf8(out,
                      cp);  // surrogate pairs come out as two 3-byte sequences; names are ASCII
          break;
        }
        default:
          out.push_back(e);
          break;  // '"', '\\', '/'
      }
    }
    return false;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

const Value* Value::get(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string Value::string_at(std::string_view key) const {
  const Value* v = get(key);
  return v && v->type == Type::string ? v->text : std::string();
}

std::optional<Value> parse(std::string_view text) { return Parser(text).document(); }

}  // namespace gp::proc::json
