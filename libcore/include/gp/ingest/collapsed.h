#pragma once
// Collapsed-stack text (gProfiler `.col`, FlameGraph/bcc folded) into one archive session.
// The grammar is gProfiler's reader (reference/gprofiler.md §2.1): skip blank lines and lines
// starting with '#', split a line at its LAST space, the right part is the count, frames are
// separated by ';', identical stacks are summed.
//
// `.col` files are recognised by a first line `# {json}` whose object has an
// `application_metadata` key. Their lines carry [app-metadata index;]container;comm[;appid: X]
// before the frames (index present when application_metadata_enabled and the profile API
// version is not v1; container present unless v1). Plain folded lines start with the comm.
//
// Processes: one synthetic pid per distinct (comm, container, appid, app metadata) with those
// fields set; comm `swapper*` outside any container is pid 0 (idle), as perf reports it.
// Frames keep `|` as is; a known gProfiler suffix (`_[k]`, `_[j]`, ...) sets the frame kind and
// is stripped from the name; unknown suffixes (`_[pe]`) stay part of the name.
// A `[truncated]` frame at the root of a line's stack (right after the prefix, or after a
// `[Profiling ...]` error frame there), as gp-fold writes for cut stacks, is not kept as a
// frame: the stack is marked model::StackEnd::truncated instead (a line of only that frame
// stays a frame).

#include <string>
#include <string_view>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::ingest {

// Parses the whole text; `name` (the path) is used in messages. Malformed lines are skipped and
// counted: then archive.truncated is set and archive.problem names the first bad line
// ("... (first: line 7: no count after the last space)"). An Error when the input has stack
// lines but none of them is valid (not a profile at all).
Result<model::Archive> parse_collapsed(std::string_view text, const std::string& name = "-");

// Splits a gProfiler suffix off a frame name: "do_idle_[k]" → ("do_idle", kernel). Names with
// no known suffix come back whole with kind unknown.
model::FrameKind split_kind_suffix(std::string_view& name);

}  // namespace gp::ingest
