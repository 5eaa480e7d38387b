#pragma once
// A small, bounded JSON reader for container runtimes' state files (config.v2.json,
// containers.json, OCI config.json). Private to libcore/src/proc: it keeps numbers as text and
// exists only because gp has no JSON dependency on the capture side.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::proc::json {

struct Value {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  std::string text;  // string value, number text, or "true"/"false"
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;

  // Member by key (first match) or nullptr; nullptr when this is not an object.
  const Value* get(std::string_view key) const;
  // The string value of member key, or "" when missing or not a string.
  std::string string_at(std::string_view key) const;
};

// Parses a whole document; nullopt on malformed input or nesting deeper than 64.
std::optional<Value> parse(std::string_view text);

}  // namespace gp::proc::json
