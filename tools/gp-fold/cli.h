#pragma once
// gp-fold's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "gp/cli/tool.h"

namespace gp::fold_tool {

struct FoldArgs {
  std::vector<std::string> inputs{"-"};  // archives, .col or folded text; "-" = stdin
  std::string output = "-";
  std::string format;  // col | folded | pprof | speedscope; empty: from -o's extension, else col
  std::string profile_api_version = "v2";
  bool no_app_metadata = false;
  std::string external_metadata;    // gProfiler's --external-metadata file (col)
  bool no_container_names = false;  // col: gProfiler's --disable-container-names
  bool no_metadata = false;         // col: gProfiler's --disable-metadata-collection
  // filters (every format)
  std::vector<int32_t> pids;
  std::vector<std::string> comms;
  std::vector<std::string> containers;
  bool include_idle = false;
  bool exclude_idle = false;
  // folded switches
  bool with_pid = false;
  bool with_tid = false;
  bool kernel_delimiter = false;
  bool annotate = false;
  bool user_only = false;
  bool kernel_only = false;
  size_t top = 0;                    // --top N: summary table instead of a format
  bool no_truncated_marker = false;  // no "[truncated]" root frame on cut stacks
  bool insert_dso_name = false;      // native frames "name (dso)"
  std::string weight = "period";     // samples | period (gp/fold/weight.h)
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, FoldArgs& args);

// Reads, filters, folds and writes; returns the exit status.
int run(FoldArgs& args);

}  // namespace gp::fold_tool
