#pragma once
// gProfiler's "jvm_flags" Java app metadata (--java-collect-jvm-flags): the flags of `jcmd PID
// VM.flags -all`, parsed as granulate_utils.java.JvmFlag.from_str parses them, filtered as
// gProfiler's JavaMetadata filters them, as its list of {name, type, value, origin, kind}.
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/json.h"

namespace gp::runtime::java {

struct JvmFlag {
  std::string name, type, value;
  // JDK 9+: the second braces ("default", "command line", "ergonomic", ...); JDK 8: "non-default"
  // for ":=", else "default".
  std::string origin;
  std::vector<std::string> kind;  // the first braces' words, sorted
};

// One line of VM.flags -all ("bool UseSerialGC = true {product} {command line}"); false when
// the line is not a flag (header lines, a ccstr flag with an empty value).
bool parse_jvm_flag(std::string_view line, JvmFlag& out);
std::vector<JvmFlag> parse_jvm_flags(std::string_view text);

// --java-collect-jvm-flags' value: "default" (flags set other than by default, without the
// notproduct, pd and develop kinds), "all", "none" ("" too), or a comma-separated list of names.
// Flags of type ccstr/ccstrlist and manageable flags are never collected (gProfiler's
// filter_jvm_flag). The result is sorted by name; `missing` gets the listed names not found.
json::Value collect_jvm_flags(const std::vector<JvmFlag>& flags, std::string_view selection,
                              std::vector<std::string>* missing = nullptr);

}  // namespace gp::runtime::java
