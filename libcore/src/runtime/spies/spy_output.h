#pragma once
// Parsers of what rbspy, phpspy and dotnet-trace write, into gp::runtime::Stack lists.
//
// Each tool's output is parsed defensively: a line (or block, or event) that does not match the
// tool's documented format is skipped and counted in SpyOutput::skipped, with the first one
// quoted in SpyOutput::first_problem, so the adapter can warn once. Parsing never throws.
// Frame names are the tool's own frame text (what gProfiler shows before its suffix); file and
// line are split out of it where the format has them. Suffixes such as "_[rb]" are not added:
// gp-fold derives them from the frame kind.

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gp/runtime/adapter.h"

namespace gp::runtime::spies {

struct SpyOutput {
  std::vector<Stack> stacks;
  size_t skipped = 0;         // lines/blocks/events that did not parse
  std::string first_problem;  // the first one, for a warning ("line 3: no sample count")
  void problem(std::string what);
};

// rbspy `record --format=collapsed`: one "frame;frame;...;leaf COUNT" line per unique stack,
// root first. A frame is "NAME - PATH:LINE" (rbspy's StackFrame Display).
SpyOutput parse_rbspy_collapsed(std::string_view text);
Frame parse_rbspy_frame(std::string_view text);

// phpspy's default ("fout") output: blocks separated by an empty line, each one frame per line
// "DEPTH [CLASS::]FUNC FILE:LINE" with depth 0 the leaf, followed by comment lines such as
// "# pid = N" (--verbose-fields=p) and "# ts = T" / "# trace_ts = T". Blocks of other pids than
// `pid` are dropped (counted in other_pids), as gProfiler filters phpspy's output by pid.
struct PhpspyOutput : SpyOutput {
  size_t other_pids = 0;   // blocks of another process
  size_t without_pid = 0;  // blocks with no "# pid" line (kept: phpspy -p traces one process)
};
PhpspyOutput parse_phpspy(std::string_view text, pid_t pid);
Frame parse_phpspy_frame(std::string_view text);

// A speedscope file (https://www.speedscope.app/file-format-schema.json) as dotnet-trace
// `collect --format speedscope` writes it: shared.frames plus one profile per thread, evented
// (O/C events, times in `unit`) or sampled (samples + weights). Evented time is turned into
// samples at `frequency_hz`, carrying the fractional remainder so the total is exact.
SpyOutput parse_speedscope(std::string_view json_text, int frequency_hz);

}  // namespace gp::runtime::spies
