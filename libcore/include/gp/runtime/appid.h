#pragma once
// Application identifiers (gProfiler's appids, reference/gprofiler.md §6) and per-application
// metadata (§7.2), for the Process entries gp-runtime writes.
//
// Appids come from the command line; paths in them are made absolute against the process's
// working directory, with symbolic links resolved inside the process's root (/proc/PID/root),
// never following a link out of it.

#include <sys/types.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "gp/runtime/adapter.h"

namespace gp::runtime {

// Where an appid's relative paths are resolved: `cwd` inside the process, `root` the prefix
// that reaches the process's files ("/proc/PID/root"; "" = this mount namespace).
struct AppContext {
  std::string cwd;
  std::string root;
  // gProfiler's --app-id-args-filter: a Java appid gets the JVM options that match any of these
  // (ECMAScript regexes, searched) appended as " (<options>)".
  std::vector<std::regex> java_args_filters;
  // gProfiler's --java-collect-spark-app-name-as-appid: a Spark executor's Java appid (an
  // argument names org.apache.spark.executor) is followed by ", spark: <spark.app.name>" from
  // <cwd>/__spark_conf__/__spark_conf__.properties (", app name not found" without it).
  bool java_spark_app_name = false;
};

// The appid, or nullopt when no rule matched. Python: gunicorn title, gunicorn, uvicorn, uwsgi,
// celery, pyspark, python -m / script.py; Java: "java: <jar or main class>"; Node:
// "nodejs: <script.js> (<abs path>)"; Ruby: "ruby: <script.rb> (<abs path>)"; PHP, .NET: none.
std::optional<std::string> app_id(Runtime runtime, const std::vector<std::string>& cmdline,
                                  const AppContext& context);

// The same for a live target (cwd read from /proc/PID/cwd).
std::optional<std::string> app_id(const Target& target,
                                  const std::vector<std::regex>& java_args_filters = {},
                                  bool java_spark_app_name = false);

// gProfiler's _append_python_module_to_proc_wd: "a.b" → "<cwd>/a/b.py", resolved in `context`.
std::string module_path(const std::string& module, const AppContext& context);
// _append_file_to_proc_wd: "x/app.py" → "<cwd>/x/app.py", resolved in `context`.
std::string file_path(const std::string& file, const AppContext& context);

// App metadata as JSON object text (§7.2): exe, execfn, arch, and per runtime its version
// ("python_version": "Python 3.11.2", "java_version", "ruby_version", "node_version") from
// `<exe> --version` run with a 5 s timeout when `run_version` is set, plus `extra_json`'s members
// (the adapter's own metadata) merged in.
std::string app_metadata_json(const Target& target, bool run_version,
                              const std::string& extra_json = {});

// `base_json` (an app metadata object) with the members of `extra_json` (the profiler's own,
// Profile::app_metadata_json: Java's "jvm_flags") it lacks; `base_json` when either is not an
// object.
std::string add_app_metadata(const std::string& base_json, const std::string& extra_json);

}  // namespace gp::runtime
