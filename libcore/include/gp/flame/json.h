#pragma once
// The flamegraph page's data: the tree as compact JSON, small enough that 100k unique stacks
// stay a page of a few megabytes rather than a hundred.

#include <ostream>
#include <string>
#include <string_view>

#include "gp/flame/tree.h"
#include "gp/model/session.h"

namespace gp::flame {

// Writes `tree` as one JSON object (contract with template.html):
//   "names": label names, most used first (small indexes for the common ones);
//   "kinds": per label, an index into "kindNames"; "kindNames": FrameKind names;
//   per node in preorder: "label" (index into names), "up" (how many levels the node sits
//   above the previous node's child level: depth = previous depth + 1 - up), "self" (total
//   minus the children's totals); "bself" the same for the base (differential trees only);
//   "differential": bool.
// The string is safe inside a <script> element: '<', '>' and '&' are \u-escaped.
void write_tree_json(std::ostream& out, const FlameTree& tree);

// `text` as a JSON string literal (with quotes), escaped as above (json::append_quoted, whose
// invalid UTF-8 bytes become U+FFFD, as the browser would show them).
std::string json_string(std::string_view text);

// Stable lowercase name of a frame kind ("kernel", "python_native", ...).
const char* kind_name(model::FrameKind kind);

}  // namespace gp::flame
