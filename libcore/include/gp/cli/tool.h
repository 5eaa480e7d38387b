#pragma once
// Shared front-end plumbing for the tools in tools/: diagnostics in the house format
// ("gp-TOOL: error: ..."), exit codes, CLI11 setup, stdout checks. This is the one libcore
// module that writes to stderr — it exists so each tool's main.cpp stays thin.

#include <signal.h>
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gp::cli {

enum Exit : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitPartial = 3 };

// Options every tool spells the same way.
struct CommonArgs {
  int verbose = 0;  // -v repeatable: 1 info, 2 debug, 3 trace
  bool quiet = false;
  std::string color = "auto";
};

// Call first in main(): sets the program name used in diagnostics, ignores SIGPIPE so that
// writes to a closed pipe fail with EPIPE (handled quietly), unties iostreams from stdio.
void init_tool(std::string_view program);
const std::string& program();

void error(std::string_view message);
void warning(std::string_view message);
void hint(std::string_view message);
// The one warning for a profile read before gp-symbolize (gp-fold, gp-flame): what is wrong and
// the command that fixes it.
void tell_unsymbolized(std::string_view input);
// Informational line, shown at verbosity >= level (and never with --quiet).
void info(int level, std::string_view message);
void set_verbosity(const CommonArgs& args);
int verbosity();
// True with -q/--quiet: no informational lines, warnings, hints or progress.
bool quiet();

// Builds the common part of a tool's CLI: description, EXAMPLES footer, -v/-q/--color,
// --version, the hidden --generate-completion.
std::unique_ptr<CLI::App> make_app(std::string_view program, std::string_view description,
                                   std::string_view examples);
void add_common_options(CLI::App& app, CommonArgs& args);

// Completion metadata kept beside the CLI11 definition (CLI11 cannot report it back).
enum class ValueHint { none, file, archive, directory, command, url };
CLI::Option* hint_value(CLI::Option* opt, ValueHint hint);
// Records the values for completions; with check, CLI11 also refuses any other value.
CLI::Option* choices(CLI::Option* opt, const std::vector<std::string>& values, bool check = true);
// Number checks with readable messages ("--duration: '1s' is not a number greater than 0"):
// CLI11's PositiveNumber and NonNegativeNumber print their range up to DBL_MAX in full.
CLI::Validator positive_number();
CLI::Validator non_negative_number();
ValueHint value_hint(const CLI::Option* opt);
const std::vector<std::string>* value_choices(const CLI::Option* opt);

// Writes the completion script for `shell` ("bash", "zsh", "fish") generated from `app`.
bool write_completion(const CLI::App& app, std::string_view shell, std::ostream& out);

// Parses argv and runs `body`, mapping CLI11 errors to usage errors (exit 2 with a
// "Try 'gp-x --help'" line), --help/--version to 0, stray exceptions to exit 1, and checking
// that stdout was written completely (a full disk fails loudly; EPIPE exits 0 quietly).
int run(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

// Checks a text output stream after writing; reports "cannot write" errors. Returns true
// when the caller should treat the output as complete (EPIPE counts as complete).
bool finish_text_output(std::ostream& out, std::string_view name);
// True when fd refers to a terminal.
bool is_terminal(int fd);
// SIGINT and SIGTERM: the signals that end a recording or a session normally.
sigset_t stop_signals();

}  // namespace gp::cli
