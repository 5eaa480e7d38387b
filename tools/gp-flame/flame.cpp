// gp-flame's run(): profile (and base) → folded stacks → call tree → HTML page.
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

#include "cli.h"
#include "gp/flame/page.h"
#include "gp/flame/tree.h"
#include "gp/fold/stacks.h"
#include "gp/fold/weight.h"
#include "gp/ingest/input.h"

namespace gp::flame_tool {
namespace {

using gp::cli::error;
using gp::cli::info;
using gp::cli::warning;

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

uint64_t archive_samples(const model::Archive& archive) {
  uint64_t n = 0;
  for (const model::Session& s : archive.sessions) n += s.total_samples();
  return n;
}

struct Profile {
  std::vector<fold::FoldedStack> stacks;
  bool partial = false;
};

// Reads any input; errors are reported here (nullopt = exit 1), truncation is a warning.
std::optional<Profile> load(const std::string& path, bool truncated_marker, fold::Weight weight) {
  auto archive = ingest::read_profile(path);
  if (!archive) {
    error(archive.error().message);
    return std::nullopt;
  }
  if (fold::mostly_unsymbolized(*archive)) gp::cli::tell_unsymbolized(display_name(path));
  Profile profile;
  if (archive->truncated) {
    warning(archive->problem);  // it names the input and what was lost
    profile.partial = true;
  }
  if (uint64_t cut = fold::truncated_samples(*archive); cut != 0)
    info(1, "'" + display_name(path) + "': " + std::to_string(cut) + " of " +
                std::to_string(archive_samples(*archive)) + " samples have a truncated stack" +
                (truncated_marker ? " (under a '[truncated]' frame)" : ""));
  fold::apply_weight(*archive, weight);
  fold::StackOptions options;  // comm as the root's children, like gProfiler's flamegraph
  options.truncated_marker = truncated_marker;
  profile.stacks = fold::fold_stacks(*archive, options);
  return profile;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

flame::PageOptions page_options(const FlameArgs& args) {
  flame::PageOptions options;
  options.title = args.title;
  options.subtitle = args.subtitle;
  options.inverted = args.inverted;
  options.source = display_name(args.input);
  if (!args.diff_base.empty()) options.base_source = display_name(args.diff_base);
  if (!args.deterministic) {
    // Without --deterministic, shades vary from run to run (FlameGraph's default) and the
    // footer says when the page was made.
    options.colour_seed = std::random_device{}() | 1u;
    options.generated = utc_now();
  }
  return options;
}

bool write_page_to(const std::string& output, const flame::FlameTree& tree,
                   const flame::PageOptions& options) {
  if (output == "-") {
    flame::write_page(std::cout, tree, options);
    std::cout.flush();
    return gp::cli::finish_text_output(std::cout, "standard output");
  }
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  if (!file) {
    error("cannot create '" + output + "': " + std::strerror(errno));
    return false;
  }
  flame::write_page(file, tree, options);
  file.close();
  if (!file) {
    error("cannot write '" + output + "': " + std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

int run(const FlameArgs& args) {
  if (args.input == "-" && args.diff_base == "-") {
    error("the profile and the --diff base cannot both be standard input");
    return gp::cli::kExitUsage;
  }
  fold::Weight weight = fold::Weight::period;
  fold::parse_weight(args.weight, weight);
  auto profile = load(args.input, !args.no_truncated_marker, weight);
  if (!profile) return gp::cli::kExitFailure;
  bool partial = profile->partial;
  auto tree = flame::build_tree(profile->stacks);
  profile->stacks.clear();
  if (!args.diff_base.empty()) {
    auto base = load(args.diff_base, !args.no_truncated_marker, weight);
    if (!base) return gp::cli::kExitFailure;
    partial = partial || base->partial;
    flame::add_base(tree, base->stacks);
    if (tree.base_total() == 0)
      warning("base '" + display_name(args.diff_base) + "' has no samples");
  }
  flame::prune(tree, args.min_width / kReferenceWidth);
  if (tree.total() == 0)
    warning("no samples in '" + display_name(args.input) + "': the page is empty");
  info(1, std::to_string(tree.nodes.size() - 1) + " frames, " +
              std::to_string(tree.labels.size() - 1) + " distinct names, " +
              std::to_string(tree.total()) + " samples");
  if (!write_page_to(args.output, tree, page_options(args))) return gp::cli::kExitFailure;
  return partial ? gp::cli::kExitPartial : gp::cli::kExitOk;
}

}  // namespace gp::flame_tool
