#include "gp/util/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gp::json {

Value::Value() = default;
Value::~Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;

Value Value::from_bool(bool b) {
  Value v;
  v.type = Type::boolean;
  v.boolean = b;
  return v;
}

Value Value::from_string(std::string s) {
  Value v;
  v.type = Type::string;
  v.text = std::move(s);
  return v;
}

Value Value::from_int(int64_t i) {
  Value v;
  v.type = Type::number;
  v.text = std::to_string(i);
  return v;
}

Value Value::from_uint(uint64_t i) {
  Value v;
  v.type = Type::number;
  v.text = std::to_string(i);
  return v;
}

namespace {

// Python's float repr: the shortest digits that round-trip, in fixed notation when the decimal
// point position is in (-4, 16], else as d.ddde+XX (at least two exponent digits).
std::string python_float_repr(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (!sci.empty() && sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  int exp10 = std::atoi(sci.c_str() + e + 1);
  if (d == 0) return sign + "0.0";
  int decpt = exp10 + 1;
  std::string out = sign;
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return out + eb;
  }
  if (decpt <= 0) return out + "0." + std::string(-decpt, '0') + digits;
  if (static_cast<size_t>(decpt) >= digits.size())
    return out + digits + std::string(decpt - digits.size(), '0') + ".0";
  return out + digits.substr(0, decpt) + "." + digits.substr(decpt);
}

}  // namespace

Value Value::from_double(double d) {
  Value v;
  v.type = Type::number;
  v.text = python_float_repr(d);
  return v;
}

Value Value::array() {
  Value v;
  v.type = Type::array;
  return v;
}

Value Value::object() {
  Value v;
  v.type = Type::object;
  return v;
}

const Value* Value::find(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

void Value::set(std::string_view key, Value v) {
  if (Value* existing = find(key)) {
    *existing = std::move(v);
    return;
  }
  members.emplace_back(std::string(key), std::move(v));
}

void Value::erase(std::string_view key) {
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (it->first == key) {
      members.erase(it);
      return;
    }
  }
}

double Value::as_double() const {
  if (type != Type::number) return 0;
  if (text == "NaN") return NAN;
  if (text == "Infinity") return INFINITY;
  if (text == "-Infinity") return -INFINITY;
  return std::strtod(text.c_str(), nullptr);
}

int64_t Value::as_int(int64_t fallback) const {
  if (type != Type::number) return fallback;
  int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  double d = as_double();
  if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18)
    return static_cast<int64_t>(d);
  return fallback;
}

std::string Value::get_string(std::string_view key, std::string_view fallback) const {
  const Value* v = find(key);
  if (v == nullptr || v->type != Type::string) return std::string(fallback);
  return v->text;
}

bool operator==(const Value& a, const Value& b) {
  // Python: True == 1 and 1 == 1.0; bools and numbers compare as numbers.
  auto numeric = [](const Value& v) { return v.type == Type::number || v.type == Type::boolean; };
  if (numeric(a) && numeric(b)) {
    if (a.type == Type::number && b.type == Type::number && a.text == b.text) return true;
    double x = a.type == Type::boolean ? (a.boolean ? 1 : 0) : a.as_double();
    double y = b.type == Type::boolean ? (b.boolean ? 1 : 0) : b.as_double();
    return x == y;
  }
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::null:
      return true;
    case Type::string:
      return a.text == b.text;
    case Type::array:
      return a.items == b.items;
    case Type::object: {
      if (a.members.size() != b.members.size()) return false;
      for (const auto& [k, v] : a.members) {
        const Value* other = b.find(k);
        if (other == nullptr || !(*other == v)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

namespace {

bool contains_ignoring_case(std::string_view text, std::string_view needle) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  if (needle.size() > text.size()) return false;
  for (size_t i = 0; i + needle.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && lower(text[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

void remove_keys_containing(Value& v, std::string_view needle) {
  if (v.is_object()) {
    auto& m = v.members;
    m.erase(
        std::remove_if(m.begin(), m.end(),
                       [&](const auto& kv) { return contains_ignoring_case(kv.first, needle); }),
        m.end());
    for (auto& kv : m) remove_keys_containing(kv.second, needle);
  } else if (v.is_array()) {
    for (Value& item : v.items) remove_keys_containing(item, needle);
  }
}

}  // namespace gp::json
