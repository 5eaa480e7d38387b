#pragma once
// gp-runtime's session driver: discovers target processes, runs one adapter per target on a
// thread of its own for the rest of the session, and turns what they return into one runtime
// session (Header.source = runtime) that gp-merge folds into a system recording.
//
// Thread model: run_session() blocks on the caller's thread, which scans for new processes about
// once a second and runs the watchdog. Each target has a profiling thread (Adapter::profile) and a
// metadata thread (app metadata, version runs). At the end (duration over, or `stop` requested)
// every profiling thread is asked to stop and gets `grace` to return; a thread that does not
// return is abandoned (detached, its target reported with an error frame) so one hung profiler
// never holds the session: DriverResult::abandoned_threads then tells the caller to leave with
// _exit once the archive is written.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "gp/model/builder.h"
#include "gp/model/session.h"
#include "gp/runtime/adapter.h"
#include "gp/runtime/discovery.h"
#include "gp/runtime/registry.h"
#include "gp/util/result.h"

namespace gp::runtime {

// What happened to one target, for the per-process lines on stderr.
struct TargetReport {
  pid_t pid = 0;
  std::string comm;
  Runtime runtime = Runtime::java;
  std::string mode;     // concrete mode ("jfr", "gp", ...) or the one asked for when skipped
  std::string adapter;  // adapter name, "" when none ran
  std::string appid;
  uint64_t samples = 0;
  std::string error_frame;  // "[Profiling error: ...]" / "[Profiling skipped: ...]" or ""
  std::vector<std::string> warnings;
  bool hung = false;    // the adapter did not return within the grace period
  bool exited = false;  // the process was gone at the session's end: normal churn, not a failure

  bool skipped() const { return error_frame.rfind("[Profiling skipped", 0) == 0; }
  bool failed() const { return !error_frame.empty() && !skipped(); }
};

struct DriverOptions {
  std::map<Runtime, std::string> modes;  // canonical mode per runtime; missing = disabled
  std::vector<pid_t> pids;               // empty = system-wide
  bool profile_spawned = true;           // also profile processes that start during the session
  std::optional<std::chrono::milliseconds> duration;  // nullopt = until `stop`
  int frequency_hz = 11;
  bool app_ids = true;
  std::vector<std::regex> app_id_args_filters;  // gProfiler's --app-id-args-filter (Java)
  bool java_spark_app_name = false;             // --java-collect-spark-app-name-as-appid (appid.h)
  bool app_metadata = true;                     // includes running `<exe> --version` (timeboxed)
  // Python frames get gProfiler's "[pkg==ver]" / "[standard-library==X.Y.Z]" (Frame::package).
  bool python_versions = true;
  AsyncProfilerOptions async_profiler;
  // gProfiler's --mode allocation: Java allocations, one sample per this many bytes, weighted in
  // bytes; the header's metadata says profiling_mode "allocation". 0: CPU profiling.
  uint64_t alloc_interval = 0;
  std::chrono::seconds java_attach_timeout{30};  // gProfiler's --java-jattach-timeout
  bool java_method_modifiers = false;            // gProfiler's --java-include-method-modifiers
  bool java_line_numbers = false;  // gProfiler's --java-line-numbers line-of-function (JFR)
  bool java_thread_names = false;  // gProfiler's --java-collect-thread-names
  std::string java_jvm_flags = "default";  // gProfiler's --java-collect-jvm-flags (JFR)
  bool java_version_check = true;          // gProfiler's --java-no-version-check turns it off
  std::vector<std::string> java_safemode;  // gProfiler's --java-safemode causes (SessionParams)
  bool java_full_hserr = false;            // gProfiler's --java-full-hserr
  std::string java_safemode_state;         // directory of the safemode state ("": this run)
  // gProfiler's --min-duration: a process younger than this when found is not profiled (0: all).
  std::chrono::seconds min_age{0};
  // gProfiler's --max-processes-runtime-profiler: at most this many processes per runtime, the
  // busiest by CPU when more are found (0: no limit).
  size_t max_per_runtime = 0;
  std::string php_proc_filter = "php-fpm";  // gProfiler's --php-proc-filter (DiscoveryOptions)
  std::set<pid_t> python_pids;  // gProfiler's --python-pyspy-process (DiscoveryOptions)
  std::chrono::milliseconds grace{15000};
  std::chrono::milliseconds rescan_interval{1000};
  std::string tmp_dir;  // parent of the private work directory; "" = $TMPDIR or /tmp
  std::span<const AdapterEntry> adapters = registered_adapters();
  std::string proc_root = "/proc";
  // Called on the driver's thread as targets start and finish (progress display).
  std::function<void(const TargetReport&)> on_start;
  std::function<void(const TargetReport&)> on_finish;
  // Called for a process left out by min_age or max_per_runtime, with why.
  std::function<void(const Target&, const std::string&)> on_left_out;
};

struct DriverResult {
  model::Session session;  // header: source runtime, host, times, sampling; caller adds producer
  std::vector<TargetReport> targets;  // in pid order
  std::vector<Rejected> rejected;     // --pids that are not targets
  size_t left_out = 0;                // targets left out by min_age or max_per_runtime
  std::string work_dir;               // (already removed)
  bool stopped = false;               // ended by `stop` before the duration
  bool abandoned_threads = false;
};

// Error only when the session cannot run at all (work directory cannot be created).
Result<DriverResult> run_session(const DriverOptions& options, std::stop_token stop);

// The Process entry's runtime stacks for one profile: added to `session` through a builder
// (frames root-first in Profile → leaf-first stacks; tid 0 → pid). Returns the samples added.
// An error profile (error_frame, no stacks) adds one empty stack of count 1, which gp-fold prints
// as gProfiler's "<comm>;[Profiling error: ...] 1" together with Process.error_frame.
uint64_t add_profile(model::SessionBuilder& builder, model::Process process,
                     const Profile& profile);

}  // namespace gp::runtime
