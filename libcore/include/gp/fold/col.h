#pragma once
// gProfiler's collapsed format (`.col`), byte-compatible with what gProfiler writes
// (reference/gprofiler.md §2): a `# {json}` header line, then one line per unique stack
//   <app-metadata idx>;<container>;<comm>[;appid: <appid>][;<error frame>];<frames> <count>
// root first, frames with their kind suffixes (`_[k]`, ...), `;` inside names written as `|`,
// lines joined by "\n" with no trailing newline.
//
// Deliberate deviation: lines are sorted (byte order) and identical lines of different pids
// are summed, so equal inputs give equal files; gProfiler emits pid by pid, unsorted.

#include <ostream>
#include <string>

#include "gp/model/session.h"
#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::fold {

struct ColOptions {
  // "v1": lines start at the comm (no index and container frames), as gProfiler's
  // --profile-api-version v1. Recorded in metadata.run_arguments.profile_api_version.
  std::string profile_api_version = "v2";
  bool application_metadata = true;  // the index frame and the header's list
  bool include_idle = true;          // gProfiler keeps swapper stacks
  bool truncated_marker = true;      // "[truncated]" after the prefix frames of cut stacks
  bool insert_dso_name = false;      // native frames "name (dso)", gProfiler's --insert-dso-name
  // metadata.external_metadata (the static part of gProfiler's --external-metadata file); null
  // keeps the recorded one, if any.
  json::Value external_metadata;
  // false: gProfiler's --disable-container-names (no names in the header, empty container frames).
  bool container_names = true;
  // false: gProfiler's --disable-metadata-collection (metadata holds only hostname,
  // profiling_mode and the sampling fields).
  bool metadata_collection = true;
};

// The header object. The base is the first session's Header.metadata_json (gProfiler's
// `metadata`), completed with the host fields the Performance Studio requires (gprofiler.md
// §8.4) where absent; keys naming a token are removed. `containers` and the app-metadata list
// come from the processes that have samples.
json::Value col_header(const model::Archive& archive, const ColOptions& options);

// Writes the whole `.col`. Fails only on an inconsistent archive that cannot be written.
Status write_col(const model::Archive& archive, const ColOptions& options, std::ostream& out);

}  // namespace gp::fold
