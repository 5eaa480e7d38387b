#pragma once
// speedscope export (https://www.speedscope.app, file format: speedscope's
// src/lib/file-format-spec.ts and dist/release/file-format-schema.json).
//
// One "sampled" profile: shared.frames holds each distinct (name, kind) once, named as in
// folded output (name plus the `_[k]`-style kind suffix); each folded stack becomes one sample
// (frame indices, root first) whose weight is its count. unit is "none" (sample counts),
// startValue 0 and endValue the total count. Frame order follows first appearance in the
// (sorted) input, so the output is deterministic. Names are JSON-escaped; invalid UTF-8 bytes
// become U+FFFD.

#include <ostream>
#include <string>
#include <vector>

#include "gp/fold/stacks.h"
#include "gp/util/result.h"

namespace gp::fold {

// `name` titles the file and the profile (e.g. the input file's name).
Status write_speedscope(const std::vector<FoldedStack>& stacks, const std::string& name,
                        std::ostream& out);

// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

}  // namespace gp::fold
