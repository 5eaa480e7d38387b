#pragma once
// The answer a recording gives in the terminal: its hottest functions (gp-fold --top's table),
// named by symbolizing a copy of the archive in memory, as `gp-symbolize | gp-fold --top N` would.

#include <cstddef>
#include <ostream>
#include <string>

#include "gp/util/result.h"

namespace gp::record {

// Reads the archive at `path`, names its frames and writes the `n` functions with the most self
// samples to `out` (nothing when it has no samples). The file is not changed.
Status write_top_functions(const std::string& path, size_t n, std::ostream& out);

}  // namespace gp::record
