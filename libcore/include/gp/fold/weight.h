#pragma once
// How much each sample weighs in the text formats (.col, folded, speedscope, --top) and the
// flame graph. perf samples carry the period the kernel recorded with them (Sample.weight):
// in frequency mode the kernel ramps the period up at start (1, then up to ~200,000 events
// per sample for `cycles`), and for events like page faults one sample stands for many events.
// `perf report` and stackcollapse-perf.pl weigh each sample by its period; so does the default
// here. pprof carries both values itself and is not rewritten.
//
// The rule for `period`: within one session, a sample's count becomes its share of the
// session's summed period, expressed in samples — count' = weight * N / W, where N is the
// session's number of weighted samples and W their summed weight — rounded so that the
// session's total stays exactly N (largest remainders get the spare units). The proportions
// are perf report's; the totals stay sample counts, as gProfiler's .col expects. Samples
// without a weight (runtime profilers, folded text) keep their count, and a session whose
// samples all weigh the same is unchanged.

#include <cstdint>
#include <string_view>

#include "gp/model/session.h"

namespace gp::fold {

enum class Weight : uint8_t {
  samples,  // every sample counts 1, whatever its period
  period,   // samples weigh their period, in sample units (the default)
};

// Parses "samples" / "period". False on anything else.
bool parse_weight(std::string_view text, Weight& out);

// Rewrites Sample.count of every session by the rule above. Samples whose share rounds to
// zero keep count 0 (every format skips them).
void apply_weight(model::Archive& archive, Weight weight);

}  // namespace gp::fold
