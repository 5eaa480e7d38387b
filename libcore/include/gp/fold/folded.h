#pragma once
// Plain folded stacks as FlameGraph's stackcollapse-* and bcc's `profile -f` write them:
// "frame;frame;frame count\n", root first, one line per unique stack, sorted.

#include <ostream>
#include <vector>

#include "gp/fold/stacks.h"

namespace gp::fold {

struct FoldedOptions {
  bool annotate = false;          // gProfiler/FlameGraph suffixes: "_[k]", "_[j]", ...
  bool kernel_delimiter = false;  // a "-" frame between the user and kernel parts (bcc -d)
};

// Writes stacks as folded lines. Frames are re-aggregated after formatting (two stacks that
// differ only in frame kinds print the same text when not annotated). `;` inside a name is
// written as `|`, newlines as spaces.
void write_folded(const std::vector<FoldedStack>& stacks, const FoldedOptions& options,
                  std::ostream& out);

}  // namespace gp::fold
