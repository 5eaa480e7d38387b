#pragma once
// gp-profile's options and the command line of each stage it runs for one profiling session.
//
// gp-profile is gProfiler's driver rebuilt from gp's tools: every session runs gp-record (the
// system, like gProfiler's perf) and gp-runtime (the runtime profilers) side by side, then
// gp-merge, gp-symbolize, gp-fold, gp-flame and gp-upload. This header maps gProfiler's
// options (gprofiler.md §9) to those tools' options, so the mapping is unit-tested without
// running anything. A Command names a tool ("gp-fold") and its arguments without argv[0]; the
// tool is located by child.h's find_tool().

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

namespace gp::profile {

// gProfiler's --perf-mode. gp-record unwinds with frame pointers only: `fp` records, `smart`
// (fp + dwarf, deepest wins) degrades to fp, `dwarf` is refused by validate(), `disabled`
// runs no system recorder (gProfiler's perf-less mode: runtime stacks only).
enum class PerfMode { fp, dwarf, smart, disabled };

// "fp", "dwarf", "smart", "disabled" and gProfiler's legacy "none" (= disabled).
Result<PerfMode> parse_perf_mode(std::string_view text);
std::string_view perf_mode_name(PerfMode mode);

// One runtime as gp-runtime spells it: `option` is the stem of --<option>-mode / --no-<option>
// ("java", "python", "ruby", "php", "dotnet", "nodejs"); `mode` is canonical ("disabled" when
// off), as gp::runtime::normalize_mode() returns it.
struct RuntimeSetting {
  std::string option;
  std::string mode;
};

struct Options {
  // What to sample.
  unsigned duration_s = 60;              // -d: seconds per session
  unsigned frequency = 11;               // -f: samples per second per CPU
  std::vector<int> pids;                 // --pids: only these processes (empty: all)
  PerfMode perf_mode = PerfMode::smart;  // gp-profile's default (gProfiler's is fp)
  std::vector<RuntimeSetting> runtimes;  // one entry per runtime gp-runtime knows
  // gProfiler's --mode allocation: Java allocations, one sample per this many bytes (its
  // --alloc-interval), weighted in bytes; gp-record and the other runtimes are off. 0: CPU.
  uint64_t alloc_interval = 0;
  bool application_identifiers = true;  // false: --disable-application-identifiers
  bool application_metadata = true;     // false: --disable-application-metadata
  std::string profile_api_version = "v2";
  bool truncated_marker = true;            // false: gp-fold --no-truncated-marker
  bool insert_dso_name = false;            // true: gp-fold --insert-dso-name
  bool profile_spawned_processes = false;  // gProfiler's default: only the session's processes
  // --python-mode pyperf: Python frames walked by gp-record (--python-frames), not gp-runtime.
  bool python_frames = false;
  // --python-mode auto: gp-record walks Python frames where it can (--python-frames=auto) and
  // gp-runtime's sampler still runs; gp-merge keeps gp-record's stacks where they have them.
  bool python_frames_auto = false;
  bool python_versions = true;              // false: --no-python-versions (no "[pkg==ver]")
  // gProfiler's --python-pyperf-verbose: gp-record, when it walks Python frames, logs its
  // debug diagnostics (-vv), its Python walk's counters among them.
  bool pyperf_verbose = false;
  // gProfiler's --python-pyspy-process: gp-runtime's Python sampler takes these pids as Python
  // processes whatever their exe (gp-runtime --python-pyspy-process).
  std::vector<int> python_pyspy_pids;
  std::string php_proc_filter = "php-fpm";  // --php-proc-filter, passed on to gp-runtime
  bool collect_metrics = true;              // false: --disable-metrics-collection
  // gProfiler's --perf-event / --perf-event-period: gp-record samples this event ("" = CPU time),
  // every `perf_event_period` events when not 0 (instead of at `frequency`).
  std::string perf_event;
  uint64_t perf_event_period = 0;
  // gProfiler's --perf-dwarf-stack-size: gp-record's --unwind-copy-size (the bytes of user stack
  // copied for samples taken before their process's unwind tables are loaded, unwound from the
  // copy later), with --perf-mode dwarf and smart. 0: gp-record's default.
  uint32_t unwind_copy_size = 0;
  // gProfiler's --external-metadata FILE: gp-fold merges it into each session's .col while it
  // is fresh (see external_metadata_age in agent.h); "" for none.
  std::string external_metadata;
  unsigned min_duration_s = 0;  // --min-duration: gp-runtime leaves out younger processes
  unsigned max_processes_per_runtime = 0;  // --max-processes-runtime-profiler (0: no limit)
  size_t skip_system_above = 0;
  // gProfiler's --perf-use-cgroups, --perf-max-cgroups, --perf-max-docker-containers: each
  // session's gp-record samples only the busiest cgroups (top_cgroups.h), chosen by the
  // session into `cgroups` (gp-record --cgroup, instead of -p).
  bool perf_use_cgroups = false;
  size_t perf_max_cgroups = 50, perf_max_docker_containers = 0;
  std::vector<std::string>
      cgroups;  // --skip-system-profilers-above: no gp-record above N processes
  // gProfiler's --java-async-profiler-mode/-features/-args, for gp-runtime; "" when not given.
  std::string ap_mode, ap_features, ap_args;
  unsigned java_jattach_timeout_s = 30;  // --java-jattach-timeout: each jcmd / asprof command
  bool java_method_modifiers = false;    // --java-include-method-modifiers (JFR frames)
  bool java_line_numbers = false;        // --java-line-numbers line-of-function (JFR frames)
  bool java_thread_names = false;        // --java-collect-thread-names
  std::string java_jvm_flags = "default";  // --java-collect-jvm-flags (jvm_flags app metadata)
  std::vector<std::string> app_id_args_filters;  // --app-id-args-filter (Java appids)
  bool java_spark_app_name = false;              // --java-collect-spark-app-name-as-appid
  bool java_version_check = true;                // off with --java-no-version-check
  // --java-safemode: gProfiler's causes that turn Java profiling off for the rest of the run
  // ("all", "" for none, or a comma-separated list); gp-runtime acts on hserr.
  std::string java_safemode = "profiled-oom,profiled-signaled,hserr";
  bool java_full_hserr = false;     // --java-full-hserr: the whole hs_err file in the log
  std::string java_safemode_state;  // gp-runtime's --java-safemode-state: kept between sessions
  bool container_names = true;                   // false: --disable-container-names
  bool metadata_collection = true;               // false: --disable-metadata-collection
  // What to produce.
  std::string output_dir;  // -o: keep profile_<ts>.col/.html here
  bool rotating_output = false;
  bool flamegraph = true;
  bool continuous = false;
  // Where to send it (-u).
  bool upload = false;
  std::string server_host = "https://profiler.granulate.io";
  std::string token;
  std::string service_name;
  bool no_verify = false;
  bool curlify_requests = false;  // gp-upload --curlify-requests
  double upload_timeout_s = 120;
  // Continuous delivery: sessions whose upload fails wait in gp-upload's spool (bounded), and
  // the Studio's gpid of this agent is kept in gpid_file between sessions.
  std::string spool_dir;
  uint64_t spool_max_bytes = 0;
  std::string gpid_file;
  // Privileges.
  bool rootless = false;
  // `gp-profile -- COMMAND`: one session that records this command and what it starts, from its
  // first instruction until it exits (gp/profile/command.h); empty: the host or --pids.
  std::vector<std::string> command;
};

// gProfiler's parse_cmd_args rules that apply to gp-profile (gprofiler.md §9.3, with its
// messages): an output is needed (-u or -o), -u needs --token and --service-name, dwarf/smart
// need -f <= 100, nodejs perf/attach-maps need perf fp or smart, --rootless needs --pids and a
// non-root user. Also gp's own: --perf-mode dwarf is unavailable; a command needs the system
// profiler and goes with neither --continuous, --pids nor --perf-use-cgroups. Returns the first violation.
std::optional<std::string> validate(const Options& options, bool running_as_root);

// True when gp-record runs (perf mode not disabled) / when any runtime is enabled.
bool system_enabled(const Options& options);
bool runtimes_enabled(const Options& options);

struct Command {
  std::string tool;               // "gp-record"
  std::vector<std::string> args;  // without argv[0]
};

// Session times as the .col and the Studio want them: naive UTC "YYYY-MM-DDTHH:MM:SS".
struct SessionTimes {
  std::string start;
  std::string end;
};

// gp-runtime's highest -F; higher -f values are clamped for it (gp-record gets them as asked).
inline constexpr unsigned kMaxRuntimeFrequency = 1000;

// The events gp-record can sample, as --perf-event takes them.
const std::vector<std::string>& perf_events();

// gp-record for one session: -d the session's length; with a command, no -d (gp-profile ends it
// once the command has exited).
Command record_command(const Options& options, const std::string& out);
// gp-record for a whole continuous run, as gProfiler runs perf: one session file per session in
// `dir`, each ended by gp-profile's SIGUSR2 (perf's --switch-output=signal); -d is 3 sessions'
// length, a safety net should gp-profile stall (gProfiler's --switch-output=<3*duration>s).
Command continuous_record_command(const Options& options, const std::string& dir);
Command runtime_command(const Options& options, const std::string& out);
// system or runtime may be empty (that recorder did not run or failed); at least one is set.
// Returns nullopt when there is nothing to merge (a single system archive is used as it is).
std::optional<Command> merge_command(const Options& options, const std::string& system,
                                     const std::string& runtime, const std::string& out);
Command symbolize_command(const std::string& in, const std::string& out);
// With `external_metadata`, gp-fold gets --external-metadata (the caller clears it when stale).
Command fold_command(const Options& options, const std::string& in, const std::string& out);
Command flame_command(const std::string& col, const std::string& out, const SessionTimes& times);
// The token never goes in a command line (visible in ps): gp-upload reads GPROFILER_TOKEN from
// the environment gp-profile gives it.
Command upload_command(const Options& options, const std::string& col, const SessionTimes& times);
// gProfiler's start-up check of the Studio: one attempt, gp-upload prints gProfiler's message.
Command health_check_command(const Options& options);
// `gp-profile upload-file`: one .col as it is (the header's times, or now, as gp-upload does).
Command upload_file_command(const Options& options, const std::string& col);

// The command as one loggable line: arguments quoted when needed, the --token value replaced
// by "***" and URL credentials (https://user:pass@host) by "***@" (they must never reach a log).
std::string describe(const Command& command);

}  // namespace gp::profile
