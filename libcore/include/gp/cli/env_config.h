#pragma once
// The two other sources of options of a Python configargparse program, for a tool that must
// read a deployment's settings the way that program does (gp-profile reads gProfiler's):
//
//  - every long option can be set from the environment variable PREFIX + its first long name
//    in upper case with '-' as '_' (--profiling-duration: GPROFILER_PROFILING_DURATION);
//  - a config file (the --config FILE option, and default files read when they exist) holds
//    `name = value` lines (also `name: value`, `name value`, `--name value`, a bare `name` for
//    a flag, `[a, b]` for an option given several times; `#`, `;` and `[section]` lines are
//    comments).
//
// A flag's value must be true/false, yes/no or 1/0. Precedence: command line > environment >
// config file (the one named by --config before the default ones) > default. Both sources are
// turned into arguments placed before the command line, so the tool's parser checks their
// values exactly as it checks typed ones, and a single-valued option keeps its last value.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

namespace gp::cli {

struct ConfigItem {
  std::string key;                  // as written, e.g. "profiling-duration" or "--pids"
  std::vector<std::string> values;  // one value, or the elements of a [list]
  bool list = false;
  int line = 0;  // 1-based
};

// Parses configargparse's default config syntax. A line that is none of the forms above fails
// with "unexpected line N in NAME: TEXT".
Result<std::vector<ConfigItem>> parse_config_text(std::string_view text, std::string_view name);

struct OptionSources {
  std::string env_prefix;                         // e.g. "GPROFILER_"
  std::string config_option;                      // e.g. "--config"; "" = no config files
  std::vector<std::string> default_config_files;  // read when they exist, before --config's
  // Reads an environment variable (nullptr when unset); std::getenv when empty.
  std::function<const char*(const std::string&)> getenv;
};

// The environment variable that sets `opt` ("" for options that have none: no long name,
// hidden, --help, --version).
std::string env_name(const CLI::Option& opt, std::string_view prefix);

// `args` (the command line without argv[0]) preceded by the arguments that the environment
// and the config files contribute for the options of `app` (its own options, not those of its
// subcommands). Errors are one-line usage messages that name the option, the variable or the
// file line at fault.
Result<std::vector<std::string>> expand_env_and_config(const CLI::App& app,
                                                       const std::vector<std::string>& args,
                                                       const OptionSources& sources);

}  // namespace gp::cli
