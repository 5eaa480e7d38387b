#pragma once
// --smart (reference/gprofiler.md §3.5): one perf recording unwinds with frame pointers, one
// with DWARF; per pid the one with the deeper stacks wins.

#include <cstdint>
#include <map>

#include "gp/merge/merge.h"
#include "gp/model/session.h"

namespace gp::merge {

// gProfiler's get_average_frame_count for each pid of a session: over the distinct stacks of
// the pid (unweighted), the number of frames before the first kernel frame, counting the comm
// frame, minus the '[unknown]' frames among them; then the mean.
// (gProfiler splits the stack string at "_[k];", so a stack whose only kernel frame is its leaf
// is counted whole there; its own test vectors do not hit that, and we follow the intent.)
std::map<int32_t, double> average_frame_counts(const model::Session& s);

// The smart session: fp's header (sampling.mode "smart"), fp's stacks for pids where fp is
// strictly deeper or dwarf has nothing, dwarf's stacks scaled by total_fp / total_dwarf
// otherwise. Pids only dwarf saw are dropped, as gProfiler does (their counts are not
// comparable with the fp recording's, which was the one sampling that process set).
// An empty side yields the other as it is.
model::Session merge_smart(const model::Session& fp, const model::Session& dwarf, uint64_t seed,
                           MergeStats& stats);

}  // namespace gp::merge
