#pragma once
// gp-merge's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "gp/cli/tool.h"
#include "gp/merge/merge.h"

namespace gp::merge_tool {

struct MergeArgs {
  std::vector<std::string> inputs{"-"};  // archives; "-" = stdin (at most once)
  std::string output = "-";
  bool output_given = false;
  bool aggregate = false;
  bool perf_less = false;
  bool smart = false;
  uint64_t seed = merge::kDefaultSeed;
  bool no_compress = false;
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, MergeArgs& args);

// Merges as the arguments say; returns the exit status.
int run(const MergeArgs& args);

}  // namespace gp::merge_tool
