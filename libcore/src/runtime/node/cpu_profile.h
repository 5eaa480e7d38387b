#pragma once
// V8's CPU profile (the inspector's Profiler.stop result) as adapter stacks (private to
// libcore/src/runtime/node).

#include <vector>

#include "gp/runtime/adapter.h"
#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::runtime::node {

// `profile` is the Profiler.Profile object {nodes: [{id, callFrame, children}], samples: [id]}.
// Each distinct sampled node becomes one root-first stack of node-kind frames (the "(root)"
// node left out), counted by its samples; "(idle)" samples (the thread waited in the event
// loop, off the CPU) are dropped. Frames: functionName or "(anonymous)", file = url,
// start_line = lineNumber + 1 (the function's first line; 0 when V8 gives none).
Result<std::vector<Stack>> stacks_from_cpu_profile(const json::Value& profile);

}  // namespace gp::runtime::node
