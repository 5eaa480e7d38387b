#pragma once
// Reads async-profiler's `collapsed` output as gp runs it (`-o collapsed -a -g -t`): one line per
// distinct stack, frames root first separated by ';', then a space and the sample count. Format:
// async-profiler docs/OutputFormats.md ("collapsed") and docs/ProfilerOptions.md (`-a/--ann`:
// JIT compiled "_[j]", inlined "_[i]", interpreted "_[0]", C1 compiled "_[1]"; kernel symbols
// end in "_[k]"; `-t/--threads`: the first frame is "[<thread name> tid=<id>]").
//
// Kinds: "_[j]", "_[0]", "_[1]" → java (gp's .col writes "_[j]" for them, the marker gProfiler's
// users search for); "_[i]" → inlined ("_[i]"); "_[k]" → kernel; no suffix → native (C/C++
// frames of the JVM and libraries). The suffix is removed from the name: fold adds it back.

#include <string_view>

#include "gp/runtime/adapter.h"
#include "stack_table.h"

namespace gp::runtime::java {

// One frame's text → name and kind.
Frame ap_frame(std::string_view text);

struct CollapsedStats {
  uint64_t lines = 0;      // stack lines read
  uint64_t bad_lines = 0;  // lines without a "<frames> <count>" shape (skipped)
};

// Adds every stack of `text` to `table`.
CollapsedStats read_ap_collapsed(std::string_view text, StackTable& table);

}  // namespace gp::runtime::java
