#pragma once
// gp-runtime's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gp/cli/tool.h"
#include "gp/runtime/adapter.h"

namespace gp::runtime_tool {

struct RuntimeArgs {
  std::optional<double> duration;  // seconds; none = until SIGINT/SIGTERM (as gp-record)
  int frequency = 11;
  std::vector<int> pids;
  std::string output = "-";
  bool output_given = false;
  bool no_compress = false;
  // --<runtime>-mode values as typed (validated and normalised in run()).
  std::map<runtime::Runtime, std::string> modes;
  std::map<runtime::Runtime, bool> disabled;  // --no-<runtime>
  bool no_spawned = false;
  bool spawned_flag = false;  // --profile-spawned-processes (the default; accepted for gProfiler)
  bool no_app_ids = false;
  bool no_app_metadata = false;
  bool no_python_versions = false;
  unsigned min_duration = 0;  // seconds; gProfiler's --min-duration
  size_t max_processes = 0;   // per runtime; gProfiler's --max-processes-runtime-profiler
  // gProfiler's async-profiler options (Java with asprof).
  std::string ap_mode = "auto";                               // auto, cpu, itimer
  std::vector<std::string> ap_features{"probesp", "vtable"};  // gProfiler's default
  std::string ap_args;                                        // more asprof options
  bool spark_app_name = false;  // --java-collect-spark-app-name-as-appid
  std::vector<std::string> app_id_args_filters;               // Java appid: JVM options to add
  std::string php_proc_filter = "php-fpm";
  std::vector<int> python_pids;  // gProfiler's --python-pyspy-process
  uint64_t alloc_interval = 0;    // bytes; gProfiler's --mode allocation (0: CPU time)
  unsigned jattach_timeout = 30;  // seconds; gProfiler's --java-jattach-timeout
  bool method_modifiers = false;  // gProfiler's --java-include-method-modifiers (JFR)
  std::string line_numbers = "none";  // gProfiler's --java-line-numbers (JFR)
  bool thread_names = false;          // gProfiler's --java-collect-thread-names
  std::string jvm_flags = "default";  // gProfiler's --java-collect-jvm-flags (JFR)
  bool no_version_check = false;      // gProfiler's --java-no-version-check
  std::string safemode = "profiled-oom,profiled-signaled,hserr";  // gProfiler's --java-safemode
  bool full_hserr = false;            // gProfiler's --java-full-hserr
  std::string safemode_state;         // directory keeping the safemode state between runs
  double grace = 15;
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, RuntimeArgs& args);

// Profiles as the arguments say; returns the exit status.
int run(const RuntimeArgs& args, const std::vector<std::string>& argv);

}  // namespace gp::runtime_tool
