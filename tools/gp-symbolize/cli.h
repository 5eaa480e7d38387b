#pragma once
// gp-symbolize's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "gp/cli/tool.h"

namespace gp::symbolize_tool {

struct SymbolizeArgs {
  std::string input = "-";  // archive; "-" = stdin
  std::string output;       // "" = standard output (refused on a terminal)
  std::vector<std::string> debug_dirs;
  std::string sysroot;
  bool stores_only = false;  // no recorded paths, no /usr/lib/debug
  bool debuginfod = false;
  bool lines = false;
  std::string demangle = "full";
  bool no_demangle = false;
  bool no_inline = false;
  unsigned jobs = 0;  // 0: one per CPU, at most 8
  bool strict = false;
  std::string export_dir;
  bool no_compress = false;
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, SymbolizeArgs& args);

// Reads, symbolizes (or exports) and writes; returns the exit status.
int run(const SymbolizeArgs& args);

}  // namespace gp::symbolize_tool
