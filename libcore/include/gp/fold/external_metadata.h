#pragma once
// gProfiler's external metadata file (--external-metadata, gprofiler.md §7.3): metadata that a
// deployment knows and the profiler cannot find out, as
//   {"static": {...}, "application": {"<pid>": {...}, ...}}
// `static` goes into the .col header as metadata.external_metadata; each `application` entry is
// merged into that process's application metadata, its keys winning over collected ones.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "gp/model/session.h"
#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::fold {

struct ExternalMetadata {
  json::Value static_part = json::Value::object();
  std::map<int32_t, json::Value> by_pid;  // objects
};

// The file's text. Both parts are optional; each must be an object, `application`'s keys
// decimal pids and its values objects. The error names what is wrong.
Result<ExternalMetadata> parse_external_metadata(std::string_view text);

// Reads and parses `path` (at most kMaxExternalMetadataBytes). Errors name the file.
inline constexpr size_t kMaxExternalMetadataBytes = 16u << 20;
Result<ExternalMetadata> read_external_metadata(const std::string& path);

// Merges each process's `application` entry into its app metadata (a process without collected
// metadata gets the entry alone). Processes of other pids are left as they are.
void apply_external_app_metadata(model::Archive& archive, const ExternalMetadata& external);

}  // namespace gp::fold
