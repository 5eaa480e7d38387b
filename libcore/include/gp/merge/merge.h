#pragma once
// gp-merge's engine: several archives in, one archive out (reference/gprofiler.md §3.5, §4).
//
// What happens, in order:
//  1. --smart: the one fp session and the one dwarf session (header.sampling.mode) become one
//     session, each pid taking the deeper unwinding (smart.h).
//  2. Runtime sessions (header.source == runtime) are merged into the system session of their
//     host (runtime.h): the runtime stacks of a pid replace its native stacks, scaled to the
//     system's sample count for it. With --perf-less, or when no system session exists for the
//     host, runtime sessions are kept unscaled as sessions of their own.
//  3. By default every remaining session stays a session of its own (ids are per session, so
//     nothing needs remapping); --aggregate re-interns all of them into one session (aggregate.h).
// Output sessions are sorted by (hostname, session id, start time, source), so the order of the
// inputs changes neither the output nor its totals; scaling uses a seeded generator per pid.

#include <cstdint>
#include <string>
#include <vector>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::merge {

inline constexpr uint64_t kDefaultSeed = 0x6770'6d65'7267'6521ull;  // "gpmerge!"

struct MergeOptions {
  bool aggregate = false;  // all sessions into one
  bool perf_less = false;  // runtime sessions unscaled, never replacing native stacks
  bool smart = false;      // fp + dwarf → one session by average stack depth
  uint64_t seed = kDefaultSeed;
};

// What the merge did, for -v lines and tests.
struct MergeStats {
  uint64_t runtime_pids_replaced = 0;  // P > 0: native stacks replaced by scaled runtime stacks
  uint64_t runtime_pids_added = 0;     // P = 0: runtime stacks kept unscaled
  uint64_t error_frames_attached = 0;  // P > 0 and the runtime profiler failed/skipped
  uint64_t runtime_pids_dropped = 0;   // P = 0 and error, or runtime profile empty
  // The system's stacks of the pid have Python frames (gp-record --python-frames): kept whole,
  // the runtime's not used.
  uint64_t runtime_pids_kept_native = 0;
  uint64_t smart_pids_dwarf = 0;       // --smart: pids that took the dwarf stacks
  uint64_t smart_pids_fp = 0;
  uint64_t smart_pids_dropped = 0;  // --smart: pids seen only by the dwarf recording
  uint64_t pids_renumbered = 0;     // --aggregate: pids that collided across hosts
};

// Merges the sessions of all inputs. Fails when --smart has no fp/dwarf pair.
Result<model::Archive> merge_archives(std::vector<model::Archive> inputs,
                                      const MergeOptions& options, MergeStats* stats = nullptr);

}  // namespace gp::merge
