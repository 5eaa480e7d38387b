#pragma once
// gp-profile's arguments and their CLI11 definition (one definition for help, man checks and
// completions). The command line is gProfiler's whole parser (gprofiler.md §9: gprofiler/main.py
// and each profiler's arguments): every option with its name, default, type, mutual exclusions
// and messages. Options gp-profile has no counterpart for are accepted and named in one warning.
// main.cpp adds the GPROFILER_<OPTION> variables and --config files (gp/cli/env_config.h).

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "gp/cli/tool.h"
#include "gp/profile/plan.h"
#include "gp/util/json.h"

namespace gp::profile_tool {

struct RuntimeArg {
  std::string option;     // "java"
  std::string mode;       // as typed (default: the registry's default)
  bool disabled = false;  // --no-<option>
};

// How a typed value is checked (argparse's `type=` of gProfiler's option).
enum class ValueType {
  text,
  positive_integer,     // > 0
  nonnegative_integer,  // >= 0
  integer,              // any int
  integer_range,        // lo <= v < hi
  integers_list,        // "1,2,3"
  choice,               // one of `choices`
  enum_list,            // comma-separated subset of `choices`
  size,                 // "2mb" (humanfriendly, binary units)
};

struct ValueCheck {
  std::string key;      // long name without dashes: the key of ProfileArgs::values / lists
  std::string display;  // "-d/--profiling-duration", as argparse names it in errors
  ValueType type = ValueType::text;
  long lo = 0, hi = 0;
  std::vector<std::string> choices;
};

struct ProfileArgs {
  gp::profile::Options options;  // filled in by finish() after parsing
  // Raw typed values of the valued options, by long name; flags by long name. Checked and
  // converted by finish() (so every message is gProfiler's).
  std::map<std::string, std::string> values;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, bool> flags;
  std::vector<ValueCheck> checks;
  std::vector<RuntimeArg> runtimes;
  // Options that were given (command line, environment or config file) but have no
  // counterpart in gp: named once at start-up, each with why it has no effect (no_effect.h),
  // the rest in one "not implemented" warning.
  std::vector<std::string> not_implemented;
  std::vector<std::pair<std::string, const CLI::Option*>> unimplemented_options;
  // What an option does differently from gProfiler's here, said once at start-up.
  std::vector<std::string> start_notes;
  // Process-level settings (gprofiler.md §9.4).
  std::string log_file = "/var/log/gprofiler/gprofiler.log";
  std::string pid_file = "/var/run/gprofiler.pid";
  long log_rotate_max_size = 5L * 1024 * 1024;
  long log_rotate_backup_count = 1;
  long controller_pid = 0;  // 0: none
  // Remote logs (gprofiler.md §8.3): sent with -u, unless --dont-send-logs or API v1.
  bool send_logs = false;
  std::string api_server;
  // --enable-heartbeat-server: profiling runs only as the server's commands say (heartbeat.h).
  bool heartbeat_server = false;
  long heartbeat_interval_s = 30;
  std::string heartbeat_file;
  bool disable_core_files = true;
  bool log_usage = false;    // --log-usage: CPU and memory used, logged after each session
  bool diagnostics = false;  // --diagnostics: processes and kernel log (-v), every 15 min
  bool pid_ns_check = true;
  bool memory_restart = true;  // false: --perf-no-memory-restart
  // --python-skip-pyperf-profiler-above: no PyPerf (gp-record --python-frames) when more Python
  // processes than this run at start (0: no limit).
  long pyperf_skip_above = 0;
  // --enable-hw-metrics-collection, --perfspect-path, --perfspect-duration (hw_metrics.h).
  bool hw_metrics = false;
  std::string perfspect_path;
  long perfspect_duration_s = 60;
  std::string hw_metrics_dir;  // where the running PerfSpect writes (set by run(); "" = none)
  // Subcommands.
  bool upload_file = false;
  std::string file_path;
  bool extract_resources = false;
  std::string resources_dest;
  std::string config_file;  // --config (read before parsing, by main.cpp)
  // Every option and its value (default or given) for the header's metadata.run_arguments,
  // as gProfiler records its parsed namespace (never the token).
  json::Value run_arguments;
  gp::cli::CommonArgs common;
};

inline constexpr const char* kDefaultConfigFile = "/etc/gprofiler/config.ini";
inline constexpr uint64_t kDefaultAllocInterval = 2ull << 20;  // gProfiler's "2mb"
inline constexpr const char* kEnvPrefix = "GPROFILER_";
inline constexpr const char* kDefaultApiServer = "https://api.granulate.io";

void add_cli(CLI::App& app, ProfileArgs& args);

// Runs the profiler (or upload-file); returns the exit status.
int run(ProfileArgs& args);

}  // namespace gp::profile_tool
