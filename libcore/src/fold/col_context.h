#pragma once
// What the `.col` header and lines share (internal): the app-metadata list with its indices and
// the containers of the processes that have samples.

#include <string>
#include <unordered_map>
#include <vector>

#include "gp/fold/col.h"
#include "gp/util/json.h"

namespace gp::fold::detail {

struct ColContext {
  std::vector<json::Value> app_metadata;              // [null, dict, ...]
  std::unordered_map<std::string, size_t> app_index;  // Process.app_metadata_json → index
  std::vector<std::string> containers;                // sorted, distinct, non-empty
  bool container_names_enabled = false;
};

ColContext make_col_context(const model::Archive& archive, const ColOptions& options);
json::Value make_col_header(const model::Archive& archive, const ColOptions& options,
                            const ColContext& ctx);

// Frame text as a `.col` field: ';' would split the frame, newlines the line.
void append_col_field(std::string_view text, std::string& out);

}  // namespace gp::fold::detail
