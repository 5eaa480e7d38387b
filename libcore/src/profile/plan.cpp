// gp-profile's option mapping: gProfiler's options (gprofiler.md §9) → the gp tools' options.
#include "gp/profile/plan.h"

#include <algorithm>
#include <cstdio>

namespace gp::profile {
namespace {

std::string join_pids(const std::vector<int>& pids) {
  std::string s;
  for (size_t i = 0; i < pids.size(); ++i) s += (i ? "," : "") + std::to_string(pids[i]);
  return s;
}

std::string_view mode_of(const Options& o, std::string_view option) {
  for (const auto& r : o.runtimes) {
    if (r.option == option) return r.mode;
  }
  return "disabled";
}

// Shell-style quoting for log lines only (never executed).
std::string quoted(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`;&|*?<>()") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<PerfMode> parse_perf_mode(std::string_view text) {
  if (text == "fp") return PerfMode::fp;
  if (text == "dwarf") return PerfMode::dwarf;
  if (text == "smart") return PerfMode::smart;
  if (text == "disabled" || text == "none") return PerfMode::disabled;
  return make_error("unknown perf mode '" + std::string(text) + "'");
}

std::string_view perf_mode_name(PerfMode mode) {
  switch (mode) {
    case PerfMode::fp:
      return "fp";
    case PerfMode::dwarf:
      return "dwarf";
    case PerfMode::smart:
      return "smart";
    case PerfMode::disabled:
      return "disabled";
  }
  return "fp";
}

bool system_enabled(const Options& o) { return o.perf_mode != PerfMode::disabled; }

bool runtimes_enabled(const Options& o) {
  return std::any_of(o.runtimes.begin(), o.runtimes.end(),
                     [](const RuntimeSetting& r) { return r.mode != "disabled"; });
}

std::optional<std::string> validate(const Options& o, bool running_as_root) {
  if (o.upload && o.token.empty()) return "Must provide --token when --upload-results is passed";
  if (o.upload && o.service_name.empty())
    return "Must provide --service-name when --upload-results is passed";
  if (!o.upload && o.output_dir.empty())
    return "Must pass at least one output method (--upload-results / --output-dir)";
  // No 100-Hz limit for smart and dwarf: gProfiler's exists for perf's 8-KiB stack copies, and
  // gp-record unwinds in the kernel instead.
  auto node = mode_of(o, "nodejs");
  if ((node == "perf" || node == "attach-maps") &&
      !(o.perf_mode == PerfMode::fp || o.perf_mode == PerfMode::smart))
    return "--nodejs-mode perf or attach-maps requires --perf-mode 'fp' or 'smart'";
  if (o.rootless && o.pids.empty()) return "--rootless requires --pids";
  if (o.rootless && running_as_root) return "--rootless cannot be used when running as root";
  if (!system_enabled(o) && !runtimes_enabled(o)) return "All profilers are disabled!";
  if (!o.command.empty()) {
    if (o.continuous || !o.pids.empty() || o.perf_use_cgroups)
      return "a command cannot be combined with --continuous, --pids or --perf-use-cgroups";
    if (!system_enabled(o)) return "a command is recorded by gp-record: not with --perf-mode disabled";
  }
  return std::nullopt;
}

const std::vector<std::string>& perf_events() {
  static const std::vector<std::string> names = {"cpu-clock",    "task-clock",   "cycles",
                                                 "instructions", "cache-misses", "branch-misses"};
  return names;
}

namespace {

// gp-record's options for `o`, with `output` (-d and where archives go) after the event's.
Command record_with_output(const Options& o, const std::vector<std::string>& output) {
  Command c{"gp-record", {}};
  if (o.perf_event_period != 0)
    c.args.insert(c.args.end(), {"--period", std::to_string(o.perf_event_period)});
  else c.args.insert(c.args.end(), {"-F", std::to_string(o.frequency)});
  if (!o.perf_event.empty()) c.args.insert(c.args.end(), {"-e", o.perf_event});
  c.args.insert(c.args.end(), output.begin(), output.end());
  // gProfiler's --perf-use-cgroups: the top cgroups instead of --pids (perf -a -G).
  if (!o.cgroups.empty()) {
    for (const auto& dir : o.cgroups) c.args.insert(c.args.end(), {"--cgroup", dir});
  } else if (!o.pids.empty()) {
    c.args.insert(c.args.end(), {"-p", join_pids(o.pids)});
  }
  // gProfiler's perf modes on gp-record's unwinder: fp walks frame pointers; dwarf and smart
  // unwind with .eh_frame tables (smart: gProfiler picks fp or dwarf per process; gp-record takes
  // tables where a binary has them and frame pointers elsewhere, frame by frame).
  c.args.insert(c.args.end(), {"--unwind", o.perf_mode == PerfMode::fp      ? "fp"
                                           : o.perf_mode == PerfMode::dwarf ? "dwarf"
                                                                            : "auto"});
  if (o.unwind_copy_size != 0 && o.perf_mode != PerfMode::fp)
    c.args.insert(c.args.end(), {"--unwind-copy-size", std::to_string(o.unwind_copy_size)});
  if (o.python_frames) c.args.push_back("--python-frames");
  else if (o.python_frames_auto) c.args.push_back("--python-frames=auto");
  if ((o.python_frames || o.python_frames_auto) && !o.python_versions)
    c.args.push_back("--no-python-versions");
  if (o.pyperf_verbose && (o.python_frames || o.python_frames_auto)) c.args.push_back("-vv");
  return c;
}

}  // namespace

Command record_command(const Options& o, const std::string& out) {
  if (!o.command.empty()) return record_with_output(o, {"-o", out});
  return record_with_output(o, {"-d", std::to_string(o.duration_s), "-o", out});
}

Command continuous_record_command(const Options& o, const std::string& dir) {
  return record_with_output(o,
                            {"-c", "-d", std::to_string(3ull * o.duration_s), "--output-dir", dir});
}

Command runtime_command(const Options& o, const std::string& out) {
  // gp-runtime takes at most 1000 Hz (the runtime profilers cannot sample faster); the system
  // recorder keeps the frequency asked for, and gp-merge scales to its counts anyway.
  unsigned hz = std::min(o.frequency, kMaxRuntimeFrequency);
  Command c{"gp-runtime",
            {"-d", std::to_string(o.duration_s), "-F", std::to_string(hz), "-o", out}};
  if (!o.pids.empty()) c.args.insert(c.args.end(), {"-p", join_pids(o.pids)});
  for (const auto& r : o.runtimes) {
    if (r.mode == "disabled") {
      c.args.push_back("--no-" + r.option);
    } else {
      c.args.insert(c.args.end(), {"--" + r.option + "-mode", r.mode});
    }
  }
  if (o.alloc_interval > 0)
    c.args.insert(c.args.end(), {"--alloc-interval", std::to_string(o.alloc_interval)});
  if (!o.profile_spawned_processes) c.args.push_back("--no-profile-spawned-processes");
  if (!o.application_identifiers) c.args.push_back("--disable-application-identifiers");
  if (!o.application_metadata) c.args.push_back("--disable-application-metadata");
  if (!o.python_versions) c.args.push_back("--no-python-versions");
  if (!o.python_pyspy_pids.empty() && mode_of(o, "python") != "disabled")
    c.args.insert(c.args.end(), {"--python-pyspy-process", join_pids(o.python_pyspy_pids)});
  if (o.min_duration_s > 0)
    c.args.insert(c.args.end(), {"--min-duration", std::to_string(o.min_duration_s)});
  if (mode_of(o, "java") != "disabled") {
    if (!o.ap_mode.empty()) c.args.insert(c.args.end(), {"--java-async-profiler-mode", o.ap_mode});
    if (!o.ap_features.empty())
      c.args.insert(c.args.end(), {"--java-async-profiler-features", o.ap_features});
    if (!o.ap_args.empty()) c.args.insert(c.args.end(), {"--java-async-profiler-args", o.ap_args});
    if (o.java_jattach_timeout_s != 30)
      c.args.insert(c.args.end(),
                    {"--java-jattach-timeout", std::to_string(o.java_jattach_timeout_s)});
    if (o.java_method_modifiers) c.args.push_back("--java-include-method-modifiers");
    if (o.java_line_numbers) c.args.insert(c.args.end(), {"--java-line-numbers", "line-of-function"});
    if (o.java_thread_names) c.args.push_back("--java-collect-thread-names");
    if (o.java_jvm_flags != "default")
      c.args.insert(c.args.end(), {"--java-collect-jvm-flags", o.java_jvm_flags});
    for (const auto& f : o.app_id_args_filters)
      c.args.insert(c.args.end(), {"--app-id-args-filter", f});
    if (o.java_spark_app_name) c.args.push_back("--java-collect-spark-app-name-as-appid");
    if (!o.java_version_check) c.args.push_back("--java-no-version-check");
    if (o.java_safemode != "profiled-oom,profiled-signaled,hserr")
      c.args.insert(c.args.end(), {"--java-safemode", o.java_safemode});  // "" stays a value
    if (o.java_full_hserr) c.args.push_back("--java-full-hserr");
    if (!o.java_safemode_state.empty())
      c.args.insert(c.args.end(), {"--java-safemode-state", o.java_safemode_state});
  }
  if (o.max_processes_per_runtime > 0)
    c.args.insert(c.args.end(), {"--max-processes", std::to_string(o.max_processes_per_runtime)});
  for (const auto& r : o.runtimes) {
    if (r.option == "php" && r.mode != "disabled" && o.php_proc_filter != "php-fpm")
      c.args.insert(c.args.end(), {"--php-proc-filter", o.php_proc_filter});
  }
  return c;
}

std::optional<Command> merge_command(const Options&, const std::string& system,
                                     const std::string& runtime, const std::string& out) {
  if (runtime.empty()) return std::nullopt;  // system only: nothing to merge into it
  if (system.empty()) return Command{"gp-merge", {"--perf-less", "-o", out, runtime}};
  return Command{"gp-merge", {"-o", out, system, runtime}};
}

Command symbolize_command(const std::string& in, const std::string& out) {
  return {"gp-symbolize", {"-o", out, in}};
}

Command fold_command(const Options& o, const std::string& in, const std::string& out) {
  Command c{"gp-fold", {"-f", "col", "-o", out}};
  if (o.profile_api_version != "v2")
    c.args.insert(c.args.end(), {"--profile-api-version", o.profile_api_version});
  if (!o.application_metadata) c.args.push_back("--no-app-metadata");
  // The page is drawn from this .col, so it follows: no marker in the file, none in the page.
  if (!o.truncated_marker) c.args.push_back("--no-truncated-marker");
  if (o.insert_dso_name) c.args.push_back("--insert-dso-name");
  if (!o.container_names) c.args.push_back("--no-container-names");
  if (!o.metadata_collection) c.args.push_back("--no-metadata");
  if (!o.external_metadata.empty() && o.application_metadata)
    c.args.insert(c.args.end(), {"--external-metadata", o.external_metadata});
  c.args.push_back(in);
  return c;
}

Command flame_command(const std::string& col, const std::string& out, const SessionTimes& t) {
  // gProfiler's page is an icicle titled "gProfiler Result <start>" (gprofiler.md §10).
  return {"gp-flame",
          {"--inverted", "--title", "gp-profile result " + t.start, "--subtitle",
           t.start + " - " + t.end, "-o", out, col}};
}

namespace {

Command studio_base(const Options& o) {
  Command c{"gp-upload", {"--server-host", o.server_host, "--service-name", o.service_name}};
  if (o.no_verify) c.args.push_back("--no-verify");
  if (o.curlify_requests) c.args.push_back("--curlify-requests");
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%g", o.upload_timeout_s);
  c.args.insert(c.args.end(), {"--timeout", timeout});
  return c;
}

}  // namespace

Command upload_command(const Options& o, const std::string& col, const SessionTimes& t) {
  Command c = studio_base(o);
  c.args.push_back("--no-health-check");  // made once, at start-up
  if (!o.gpid_file.empty()) c.args.insert(c.args.end(), {"--gpid-file", o.gpid_file});
  if (!o.spool_dir.empty()) {
    c.args.insert(c.args.end(), {"--spool", o.spool_dir});
    if (o.spool_max_bytes > 0)
      c.args.insert(c.args.end(), {"--spool-max-bytes", std::to_string(o.spool_max_bytes)});
  }
  c.args.insert(c.args.end(), {"--start-time", t.start, "--end-time", t.end, col});
  return c;
}

Command health_check_command(const Options& o) {
  Command c = studio_base(o);
  c.args.insert(c.args.end(), {"--retries", "0", "--health-check"});
  return c;
}

Command upload_file_command(const Options& o, const std::string& col) {
  Command c = studio_base(o);
  c.args.push_back(col);
  return c;
}

// "https://user:pass@host/x" → "https://***@host/x".
std::string without_userinfo(const std::string& arg) {
  size_t scheme = arg.find("://");
  if (scheme == std::string::npos) return arg;
  size_t start = scheme + 3, end = arg.find_first_of("/?#", start);
  if (end == std::string::npos) end = arg.size();
  size_t at = arg.rfind('@', end - 1);
  if (at == std::string::npos || at < start || end == start) return arg;
  return arg.substr(0, start) + "***" + arg.substr(at);
}

std::string describe(const Command& c) {
  std::string line = c.tool;
  bool secret = false;
  for (const auto& a : c.args) {
    line += ' ';
    line += secret ? std::string("***") : quoted(without_userinfo(a));
    secret = a == "--token";
  }
  return line;
}

}  // namespace gp::profile
