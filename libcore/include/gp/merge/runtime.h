#pragma once
// Runtime profiles into a system profile (reference/gprofiler.md §4.2, §2.9).
//
// For every pid of the runtime session with samples or an error, with P = the system's sample
// count for that pid and R = the runtime's:
//   runtime error (Process.error_frame, or one stack that is a single "[Profiling x: y]" frame):
//     P > 0: the system stacks stay and the system process gets error_frame (gp-fold puts it
//            right after the comm frame); P = 0: nothing is emitted for the pid.
//   runtime stacks, P > 0: the pid's native samples are replaced by the runtime samples scaled
//     by P / R with seeded probabilistic rounding (scale.h).
//   runtime stacks, P = 0: the runtime samples are added unscaled.
//   system stacks with Python frames (gp-record --python-frames walked the process): they stay
//     as they are, and the runtime's samples and error of the pid are not used.
// The process entry then comes from the runtime (appid, app metadata, runtime), with the
// system's container name when the runtime has none and the system's comm when it has none.

#include "gp/merge/merge.h"
#include "gp/model/session.h"

namespace gp::merge {

// Merges `runtime` into `system` in place.
void merge_runtime(model::Session& system, const model::Session& runtime, uint64_t seed,
                   MergeStats& stats);

// True when the name is a gProfiler error/skip frame: "[Profiling <what>: <reason>]".
bool is_profiling_error_frame(const std::string& name);

}  // namespace gp::merge
