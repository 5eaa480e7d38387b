#pragma once
// The terminal summary of `gp-fold --top N`: the functions with the most self samples.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gp/fold/stacks.h"

namespace gp::fold {

struct TopRow {
  std::string frame;   // name with its kind suffix ("do_idle_[k]")
  uint64_t self = 0;   // samples where the frame is the leaf
  uint64_t total = 0;  // samples where the frame appears (once per stack, even if recursive)
};

struct TopTable {
  std::vector<TopRow> rows;  // by self desc, then total desc, then name
  uint64_t samples = 0;      // all samples (the percent base)
};

// Ranks frames of `stacks` (give them without the process frame to rank functions only).
TopTable top_frames(const std::vector<FoldedStack>& stacks, size_t n);

// Writes the table: SELF, SELF%, TOTAL, TOTAL%, FRAME columns and a header line.
void write_top(const TopTable& table, std::ostream& out);

}  // namespace gp::fold
