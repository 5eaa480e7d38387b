#pragma once
// gProfiler's probabilistic rounding (reference/gprofiler.md §4.1), made reproducible: each
// scaled count rounds up with probability equal to its fractional part, drawn from a seeded
// generator, so the expected total is preserved and a given seed always gives the same output.

#include <cstdint>

namespace gp::merge {

class Rounder {
 public:
  // One generator per (seed, pid): the result for a pid does not depend on other pids or on
  // the order of the inputs.
  Rounder(uint64_t seed, int64_t stream);

  // count * ratio, rounded up with probability frac(count * ratio). ratio == 1 is exact.
  uint64_t scale(uint64_t count, double ratio);
  // A uniform double in [0, 1).
  double next_unit();

 private:
  uint64_t state_;
};

}  // namespace gp::merge
