#pragma once
// gp-import's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <string>

#include "gp/cli/tool.h"

namespace gp::import_tool {

struct ImportArgs {
  std::string input = "-";    // perf script text, or a perf.data file; "-" = stdin
  std::string output = "-";   // archive; "-" = stdout
  bool output_given = false;  // -o was on the command line (allows a terminal)
  std::string event;          // --event NAME; empty = the first event seen
  bool no_compress = false;
  bool via_perf_script = false;  // perf.data decoded by 'perf script', not by gp-import
  std::string kallsyms;          // kernel symbols for a perf.data's kernel frames
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, ImportArgs& args);

// Imports as the arguments say; returns the exit status.
int run(const ImportArgs& args);

}  // namespace gp::import_tool
