#pragma once
// gp-flame's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <string>

#include "gp/cli/tool.h"

namespace gp::flame_tool {

// The page's frames are pruned against this width, in CSS pixels, for --min-width.
inline constexpr double kReferenceWidth = 1200;

struct FlameArgs {
  std::string input = "-";   // archive, .col or folded text; "-" = stdin
  std::string output = "-";  // HTML page; "-" = stdout
  std::string title = "Flame Graph";
  std::string subtitle;
  std::string diff_base;  // --diff BASE: differential page against this profile
  bool inverted = false;  // icicle (root on top), gProfiler's layout
  bool deterministic = false;
  double min_width = 0;              // px at kReferenceWidth; 0 keeps every frame
  bool no_truncated_marker = false;  // no "[truncated]" root frame on cut stacks
  std::string weight = "period";     // samples | period (gp/fold/weight.h)
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, FlameArgs& args);

// Reads, folds, renders and writes the page; returns the exit status.
int run(const FlameArgs& args);

}  // namespace gp::flame_tool
