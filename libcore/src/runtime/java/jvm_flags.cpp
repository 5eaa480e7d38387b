// JVM flags from VM.flags -all (see jvm_flags.h).
#include "jvm_flags.h"

#include <algorithm>
#include <cctype>

namespace gp::runtime::java {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The next run of non-blanks at `at` (after blanks), advancing `at`.
std::string_view word(std::string_view s, size_t& at) {
  while (at < s.size() && is_space(s[at])) ++at;
  size_t start = at;
  while (at < s.size() && !is_space(s[at])) ++at;
  return s.substr(start, at - start);
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    auto w = word(s, at);
    if (w.empty()) return out;
    out.emplace_back(w);
  }
}

}  // namespace

bool parse_jvm_flag(std::string_view line, JvmFlag& out) {
  // "<type> <name> [:]= <value> {<kinds>} [{<origin>}]": JvmFlag.from_str's pattern (a value has
  // no blanks; an empty one does not match).
  size_t at = 0;
  auto type = word(line, at);
  auto name = word(line, at);
  auto eq = word(line, at);
  if (type.empty() || name.empty() || (eq != "=" && eq != ":=")) return false;
  auto value = word(line, at);
  if (value.empty() || value.front() == '{') return false;
  while (at < line.size() && is_space(line[at])) ++at;
  if (at >= line.size() || line[at] != '{') return false;
  size_t close = line.find('}', at);
  if (close == std::string_view::npos || close == at + 1) return false;
  out.kind = split_words(line.substr(at + 1, close - at - 1));
  std::sort(out.kind.begin(), out.kind.end());
  size_t origin_open = line.find('{', close);
  size_t origin_close = line.rfind('}');
  if (origin_open != std::string_view::npos && origin_close > origin_open) {
    out.origin = std::string(line.substr(origin_open + 1, origin_close - origin_open - 1));
  } else {
    out.origin = eq == ":=" ? "non-default" : "default";  // JDK 8
  }
  out.type = std::string(type);
  out.name = std::string(name);
  out.value = std::string(value);
  return true;
}

std::vector<JvmFlag> parse_jvm_flags(std::string_view text) {
  std::vector<JvmFlag> out;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    JvmFlag f;
    if (parse_jvm_flag(text.substr(at, end - at), f)) out.push_back(std::move(f));
    at = end + 1;
  }
  return out;
}

json::Value collect_jvm_flags(const std::vector<JvmFlag>& flags, std::string_view selection,
                              std::vector<std::string>* missing) {
  auto has_kind = [](const JvmFlag& f, std::string_view k) {
    return std::find(f.kind.begin(), f.kind.end(), k) != f.kind.end();
  };
  std::vector<std::string> names;
  bool all = selection == "all", defaults = selection == "default";
  bool none = selection == "none" || selection.empty();
  if (!all && !defaults && !none) {
    for (size_t at = 0; at <= selection.size();) {
      size_t end = std::min(selection.find(',', at), selection.size());
      std::string_view n = selection.substr(at, end - at);
      while (!n.empty() && is_space(n.front())) n.remove_prefix(1);
      while (!n.empty() && is_space(n.back())) n.remove_suffix(1);
      names.emplace_back(n);
      at = end + 1;
    }
  }
  std::vector<const JvmFlag*> chosen;
  if (!none) {
    for (const JvmFlag& f : flags) {
      if (f.type == "ccstr" || f.type == "ccstrlist" || has_kind(f, "manageable")) continue;
      if (defaults && (f.origin == "default" || has_kind(f, "notproduct") || has_kind(f, "pd") ||
                       has_kind(f, "develop")))
        continue;
      if (!all && !defaults && std::find(names.begin(), names.end(), f.name) == names.end())
        continue;
      chosen.push_back(&f);
    }
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const JvmFlag* a, const JvmFlag* b) { return a->name < b->name; });
  if (missing != nullptr) {
    for (const std::string& n : names) {
      bool found = std::any_of(chosen.begin(), chosen.end(),
                               [&](const JvmFlag* f) { return f->name == n; });
      if (!found) missing->push_back(n);
    }
  }
  json::Value out = json::Value::array();
  for (const JvmFlag* f : chosen) {
    json::Value o = json::Value::object();
    o.set("name", json::Value::from_string(f->name));
    o.set("type", json::Value::from_string(f->type));
    o.set("value", json::Value::from_string(f->value));
    o.set("origin", json::Value::from_string(f->origin));
    json::Value kinds = json::Value::array();
    for (const auto& k : f->kind) kinds.push_back(json::Value::from_string(k));
    o.set("kind", std::move(kinds));
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gp::runtime::java
