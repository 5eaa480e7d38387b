#pragma once
// Plain folded stacks as FlameGraph's stackcollapse-* and bcc's `profile -f` write them:
// "frame;frame;frame count\n", root first, one line per unique stack, sorted.

#include <ostream>

#include "gp/fold/stacks.h"
#include "gp/model/session.h"

namespace gp::fold {

struct FoldedOptions {
  bool annotate = false;          // gProfiler/FlameGraph suffixes: "_[k]", "_[j]", ...
  bool kernel_delimiter = false;  // a "-" frame between the user and kernel parts (bcc -d)
};

// Writes the samples of `archive`, shaped by `stacks` (process frame, idle, user/kernel-only)
// as fold_stacks would give them, as folded lines sorted by text. Lines that print the same
// are summed (two stacks that differ only in frame kinds print alike when not annotated). `;`
// inside a name is written as `|`, newlines as spaces.
void write_folded(const model::Archive& archive, const StackOptions& stacks,
                  const FoldedOptions& options, std::ostream& out);

}  // namespace gp::fold
