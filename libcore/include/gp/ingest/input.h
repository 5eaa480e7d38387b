#pragma once
// Reading any profile input a tool accepts: an archive (plain or LZ4), a gProfiler `.col`, or
// plain folded text (FlameGraph/bcc "a;b;c 12"). Text inputs become one session with
// source = folded whose frames are symbolic, with kinds taken from gProfiler's suffixes
// (`_[k]` kernel, `_[j]` java, `_[p]` python, ...) and the process fields (comm, container,
// appid, app metadata) from the `.col` line prefix and header.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::ingest {

enum class InputFormat { archive, collapsed, perf_script, unknown };

// Guesses the format from the first bytes of an input.
InputFormat sniff(std::string_view first_bytes);

// What a non-archive input is and which tool reads it, for tools that read archives only
// (gp-symbolize, gp-merge): "'x.col' is a gProfiler .col file, not a gp archive: gp-fold and
// gp-flame read it". nullopt when the first bytes look like an archive, are empty, or cannot
// be classified (the archive reader's own error says more then).
std::optional<std::string> not_an_archive(std::string_view first_bytes, const std::string& name);

// The same for a path, reading its first bytes; nullopt for "-" (stdin cannot be read twice)
// and for files that cannot be opened (the reader reports those).
std::optional<std::string> path_not_an_archive(const std::string& path);

// The longest line a text input (.col, folded, perf script) may have: a stack of the most
// frames an archive holds (8,192) with 2 KiB names. A longer line is refused (an Error) as
// soon as it is read that far, before the rest of it: a hostile 1 GB line costs 16 MiB.
inline constexpr size_t kMaxTextLineBytes = 16u << 20;

// Reads a path ("-" for stdin) in any accepted format. archive.truncated (exit 3) is set for
// a cut archive or for malformed text lines that were skipped (problem says which line).
Result<model::Archive> read_profile(const std::string& path);

}  // namespace gp::ingest
