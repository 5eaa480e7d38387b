#pragma once
// A `.col` file split into its `# {json}` header and its stack lines, without copying the
// stacks (gp-upload sends them as they are).

#include <optional>
#include <string_view>

#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::upload {

struct ColText {
  std::optional<json::Value> header;  // the parsed header object, when line 1 starts with '#'
  std::string_view stacks;            // everything after the header line (or the whole text)
};

// Fails when line 1 starts with '#' but is not `#` + a JSON object.
Result<ColText> split_col(std::string_view text);

}  // namespace gp::upload
