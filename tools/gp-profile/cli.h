#pragma once
// gp-profile's arguments and their CLI11 definition (one definition for help, man checks and
// completions). Option names and defaults are gProfiler's (gprofiler.md §9).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "gp/cli/tool.h"
#include "gp/profile/plan.h"

namespace gp::profile_tool {

struct RuntimeArg {
  std::string option;     // "java"
  std::string mode;       // as typed (default: the registry's default)
  bool disabled = false;  // --no-<option>
};

struct ProfileArgs {
  gp::profile::Options options;   // filled in by finish() after parsing
  std::vector<std::string> pids;  // as typed: comma-separated and/or repeated
  std::string perf_mode = "fp";
  bool no_perf = false;
  std::vector<RuntimeArg> runtimes;
  bool no_flamegraph = false;
  bool disable_application_identifiers = false;
  bool disable_application_metadata = false;
  bool no_truncated_marker = false;
  std::string log_file;
  std::string pid_file;
  // upload-file subcommand
  bool upload_file = false;
  std::string file_path;
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, ProfileArgs& args);

// Runs the profiler (or upload-file); returns the exit status.
int run(ProfileArgs& args);

}  // namespace gp::profile_tool
