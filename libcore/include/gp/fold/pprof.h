#pragma once
// pprof export: an archive as one profile.proto message (github.com/google/pprof,
// proto/profile.proto), the format of `go tool pprof`, Pyroscope push, Parca and Datadog.
//
// The archive's tables already follow pprof's model, so they map one to one: Mapping (with the
// build-id as lowercase hex), Location (address + mapping + lines), Function, Sample (location
// ids leaf first). Differences the encoder takes care of:
//   - Inline chains: the archive stores a location's lines outermost first; pprof wants the
//     innermost (inlined) function in Line[0] and the caller last, so lines are reversed.
//   - Several sessions become one profile: ids are remapped, equal mappings, functions and
//     locations are shared, and only entries that some sample reaches are written.
//   - No process (comm) frame: pprof users filter with labels instead. Each sample carries
//     num labels `pid`, `tid` and string labels `comm` (the process's, else the thread's),
//     `container` (name, else id) and `appid` when known. Sessions read from text (.col,
//     folded; Header.source = folded) get no pid/tid labels: their pids are made up.
//   - Values: `samples/count`, plus `cpu/nanoseconds` when every session's sampling says how
//     long a sample is (1e9/frequency, the cpu-clock period, or per-sample cpu-clock weights).
//     period_type/period follow the first session; time_nanos is the earliest session start
//     and duration_nanos reaches the latest session end.
//   - Strings are made valid UTF-8 (proto3 `string`), invalid bytes becoming U+FFFD.
//   - A stack marked truncated (its user part was cut) gets a last, outermost location with no
//     mapping whose one line names the function "[truncated]" (fold::kTruncatedFrame), unless
//     PprofOptions::truncated_marker is false.

#include <ostream>
#include <string>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::fold {

struct PprofOptions {
  bool truncated_marker = true;  // a "[truncated]" root location on cut stacks
};

// Writes the gzipped profile (the form pprof files take on disk) to `out`, streaming.
// Fails on ids that do not resolve (a sample naming a missing stack, location, ...) and on
// write errors; nothing is promised about what was already written then.
Status write_pprof(const model::Archive& archive, std::ostream& out,
                   const PprofOptions& options = {});

// The same profile as raw (not gzipped) protobuf bytes.
Result<std::string> encode_pprof(const model::Archive& archive, const PprofOptions& options = {});

}  // namespace gp::fold
