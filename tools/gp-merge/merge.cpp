// gp-merge's run(): read every input archive, merge (libcore), write one archive.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "cli.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/ingest/input.h"
#include "gp/util/version.h"

namespace gp::merge_tool {
namespace {

using gp::cli::error;
using gp::cli::hint;
using gp::cli::info;
using gp::cli::warning;

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// Reads all inputs. nullopt after an error was reported.
std::optional<std::vector<model::Archive>> load(const MergeArgs& a, bool& partial) {
  std::vector<model::Archive> out;
  for (const std::string& path : a.inputs) {
    if (auto why = ingest::path_not_an_archive(path)) {  // .col, perf.data, perf text
      error(*why);
      return std::nullopt;
    }
    auto archive = archive::read_archive(path);
    if (!archive) {
      error(archive.error().message);
      return std::nullopt;
    }
    if (archive->truncated) {
      warning(archive->problem.empty() ? "input '" + display_name(path) + "' is truncated"
                                       : archive->problem);
      partial = true;
    }
    out.push_back(std::move(*archive));
  }
  return out;
}

int write(const MergeArgs& a, model::Archive& merged) {
  auto out = archive::OutputStream::open(a.output, !a.no_compress);
  if (!out) {
    error(out.error().message);
    return gp::cli::kExitFailure;
  }
  Status st =
      archive::write_archive(**out, merged, {.producer = "gp-merge", .producer_version = kVersion});
  if (st) st = (*out)->close();
  if (st) return gp::cli::kExitOk;
  if ((*out)->last_errno() == EPIPE) return gp::cli::kExitOk;
  error(st.error().message);
  return gp::cli::kExitFailure;
}

void report(const merge::MergeStats& s) {
  info(1, "runtime pids: " + std::to_string(s.runtime_pids_replaced) + " replaced, " +
              std::to_string(s.runtime_pids_added) + " added unscaled, " +
              std::to_string(s.error_frames_attached) + " error frames attached, " +
              std::to_string(s.runtime_pids_dropped) + " dropped, " +
              std::to_string(s.runtime_pids_kept_native) + " kept with gp-record's Python frames");
  if (s.smart_pids_fp + s.smart_pids_dwarf + s.smart_pids_dropped > 0)
    info(1, "smart: " + std::to_string(s.smart_pids_fp) + " pids fp, " +
                std::to_string(s.smart_pids_dwarf) + " dwarf, " +
                std::to_string(s.smart_pids_dropped) + " dwarf-only dropped");
  if (s.pids_renumbered > 0)
    info(1, std::to_string(s.pids_renumbered) + " pids renumbered (they collided across hosts)");
}

}  // namespace

int run(const MergeArgs& a) {
  if (std::count(a.inputs.begin(), a.inputs.end(), "-") > 1) {
    error("standard input ('-') can be given only once");
    return gp::cli::kExitUsage;
  }
  if (a.output == "-" && !a.output_given && gp::cli::is_terminal(STDOUT_FILENO)) {
    error("refusing to write a binary archive to a terminal");
    hint("redirect standard output or pipe it into gp-fold, or give '-o FILE' ('-o -' forces it)");
    return gp::cli::kExitUsage;
  }
  bool partial = false;
  auto inputs = load(a, partial);
  if (!inputs) return gp::cli::kExitFailure;
  merge::MergeStats stats;
  auto merged = merge::merge_archives(
      std::move(*inputs),
      {.aggregate = a.aggregate, .perf_less = a.perf_less, .smart = a.smart, .seed = a.seed},
      &stats);
  if (!merged) {
    error("cannot merge: " + merged.error().message);
    return gp::cli::kExitFailure;
  }
  report(stats);
  int status = write(a, *merged);
  if (status != gp::cli::kExitOk) return status;
  return partial ? gp::cli::kExitPartial : gp::cli::kExitOk;
}

}  // namespace gp::merge_tool
