#pragma once
// Reading any profile input a tool accepts: an archive (plain or LZ4), a gProfiler `.col`, or
// plain folded text (FlameGraph/bcc "a;b;c 12"). Text inputs become one session with
// source = folded whose frames are symbolic, with kinds taken from gProfiler's suffixes
// (`_[k]` kernel, `_[j]` java, `_[p]` python, ...) and the process fields (comm, container,
// appid, app metadata) from the `.col` line prefix and header.

#include <string>
#include <string_view>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::ingest {

enum class InputFormat { archive, collapsed, perf_script, unknown };

// Guesses the format from the first bytes of an input.
InputFormat sniff(std::string_view first_bytes);

// Reads a path ("-" for stdin) in any accepted format. archive.truncated (exit 3) is set for
// a cut archive or for malformed text lines that were skipped (problem says which line).
Result<model::Archive> read_profile(const std::string& path);

}  // namespace gp::ingest
