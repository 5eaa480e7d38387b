// gp-runtime's run(): validate modes, run the session driver, report per process, write.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <sstream>

#include "cli.h"
#include "gp/archive/byte_io.h"
#include "gp/archive/writer.h"
#include "gp/runtime/discovery.h"
#include "gp/runtime/java_safemode.h"
#include "gp/runtime/driver.h"
#include "gp/runtime/registry.h"
#include "gp/util/version.h"
#include "signals.h"

namespace gp::runtime_tool {
namespace {

using gp::cli::error;
using gp::cli::hint;
using gp::cli::info;
using gp::cli::warning;
using runtime::Runtime;
using runtime::TargetReport;

// Canonical modes; nullopt after a usage error was reported.
std::optional<std::map<Runtime, std::string>> resolve_modes(const RuntimeArgs& a) {
  std::map<Runtime, std::string> modes;
  for (Runtime r : runtime::all_runtimes()) {
    std::vector<std::string> warnings;
    auto mode = runtime::normalize_mode(r, a.modes.at(r), &warnings);
    if (!mode) {
      error(mode.error().message);
      return std::nullopt;
    }
    for (const auto& w : warnings) warning(w);
    modes[r] = a.disabled.at(r) ? "disabled" : *mode;
    // gProfiler's allocation mode runs only the profilers that support it: Java's.
    if (a.alloc_interval > 0 && r != Runtime::java && modes[r] != "disabled") {
      info(1, std::string(runtime::runtime_name(r)) + " is off: it has no allocation profiler");
      modes[r] = "disabled";
    }
  }
  return modes;
}

std::string describe(const TargetReport& t) {
  std::string who = "pid " + std::to_string(t.pid) + " (" + t.comm +
                    "): " + std::string(runtime::runtime_name(t.runtime));
  if (!t.adapter.empty()) who += " via " + t.adapter;
  else if (!t.mode.empty()) who += " (mode " + t.mode + ")";
  return who;
}

// A process that ended during the session is churn: said once, not a failure.
bool churn(const TargetReport& t) { return t.exited && !t.hung && !t.skipped(); }

void print_result(const TargetReport& t) {
  if (churn(t)) {
    info(0, describe(t) + ": exited during the session" +
                (t.samples > 0 ? " (" + std::to_string(t.samples) + " samples kept)" : "") +
                (t.error_frame.empty() ? "" : ": " + t.error_frame));
    return;
  }
  for (const auto& w : t.warnings) warning("pid " + std::to_string(t.pid) + ": " + w);
  if (!t.error_frame.empty()) {
    warning(describe(t) + ": " + t.error_frame);
    return;
  }
  std::string line = describe(t) + ": " + std::to_string(t.samples) + " samples";
  if (!t.appid.empty()) line += ", appid '" + t.appid + "'";
  info(0, line);
}

runtime::DriverOptions driver_options(const RuntimeArgs& a, std::map<Runtime, std::string> modes) {
  runtime::DriverOptions o;
  o.modes = std::move(modes);
  o.pids.assign(a.pids.begin(), a.pids.end());
  o.profile_spawned = !a.no_spawned;
  if (a.duration) o.duration = std::chrono::milliseconds(static_cast<int64_t>(*a.duration * 1000));
  o.frequency_hz = a.frequency;
  o.app_ids = !a.no_app_ids;
  o.app_metadata = !a.no_app_metadata;
  o.python_versions = !a.no_python_versions;
  o.php_proc_filter = a.php_proc_filter;
  o.python_pids.insert(a.python_pids.begin(), a.python_pids.end());
  o.grace = std::chrono::milliseconds(static_cast<int64_t>(a.grace * 1000));
  o.min_age = std::chrono::seconds(a.min_duration);
  o.max_per_runtime = a.max_processes;
  for (const auto& f : a.app_id_args_filters) o.app_id_args_filters.emplace_back(f);
  o.java_spark_app_name = a.spark_app_name;
  o.async_profiler.event = a.ap_mode;
  o.alloc_interval = a.alloc_interval;
  o.java_attach_timeout = std::chrono::seconds(a.jattach_timeout);
  o.java_method_modifiers = a.method_modifiers;
  o.java_line_numbers = a.line_numbers == "line-of-function";
  o.java_thread_names = a.thread_names;
  o.java_jvm_flags = a.jvm_flags;
  o.java_version_check = !a.no_version_check;
  o.java_full_hserr = a.full_hserr;
  o.java_safemode_state = a.safemode_state;
  o.java_safemode = gp::runtime::java_safemode_causes(a.safemode);
  o.async_profiler.features.clear();
  for (const auto& f : a.ap_features)
    if (f != "probesp") o.async_profiler.features.push_back(f);  // not in stock async-profiler
  std::istringstream extra(a.ap_args);
  for (std::string word; extra >> word;) o.async_profiler.extra.push_back(word);
  o.on_left_out = [](const runtime::Target& t, const std::string& why) {
    info(1, "not profiling pid " + std::to_string(t.pid) + " (" + t.comm + "): " + why);
  };
  const bool tty = gp::cli::is_terminal(STDERR_FILENO);
  o.on_start = [tty](const TargetReport& t) {
    std::string line =
        "profiling " + describe(t) + (t.mode.empty() ? "" : " (mode " + t.mode + ")");
    info(tty ? 0 : 1, line);
  };
  return o;
}

int write_archive(const RuntimeArgs& a, model::Session& session) {
  auto out = archive::OutputStream::open(a.output, !a.no_compress);
  if (!out) {
    error(out.error().message);
    return gp::cli::kExitFailure;
  }
  archive::Writer writer(**out, {.producer = "gp-runtime", .producer_version = kVersion});
  Status st = writer.write_session(session);
  if (st) st = (*out)->close();
  if (st || (*out)->last_errno() == EPIPE) return gp::cli::kExitOk;
  error(st.error().message);
  return gp::cli::kExitFailure;
}

// 0: all profiled (or skipped by choice, or gone during the session); 3: some failed; 1:
// nothing could run. The archive is complete in every case: 3 is for profilers that failed.
int outcome(const runtime::DriverResult& r, const RuntimeArgs& a) {
  size_t ran = 0, failed = 0, skipped = 0, exited = 0;
  for (const auto& t : r.targets) {
    if (churn(t)) ++exited;
    else if (t.failed() || t.hung) ++failed;
    else if (t.skipped()) ++skipped;
    else ++ran;
  }
  for (const auto& rej : r.rejected) {
    error("process " + std::to_string(rej.pid) + ": " + rej.reason);
  }
  if (r.targets.empty()) {
    if (!a.pids.empty() && r.left_out == 0) return gp::cli::kExitFailure;
    info(0, r.left_out > 0 ? std::to_string(r.left_out) +
                                 " processes left out (--min-duration, --max-processes)"
                           : "no processes of an enabled runtime were found");
    return gp::cli::kExitOk;
  }
  info(0, std::to_string(r.targets.size()) + " processes: " + std::to_string(ran) + " profiled, " +
              std::to_string(skipped) + " skipped, " + std::to_string(failed) + " failed" +
              (exited > 0 ? ", " + std::to_string(exited) + " exited" : ""));
  if (ran == 0 && exited == 0 && failed + skipped == r.targets.size()) return gp::cli::kExitFailure;
  if (failed > 0 || !r.rejected.empty()) return gp::cli::kExitPartial;
  return gp::cli::kExitOk;
}

}  // namespace

int run(const RuntimeArgs& a, const std::vector<std::string>& argv) {
  auto modes = resolve_modes(a);
  if (!modes) return gp::cli::kExitUsage;
  if (auto filter = runtime::check_php_proc_filter(a.php_proc_filter); !filter) {
    error(filter.error().message);
    return gp::cli::kExitUsage;
  }
  if (a.no_spawned && a.spawned_flag) return gp::cli::kExitUsage;  // CLI11 excludes it already
  if (a.output == "-" && !a.output_given && gp::cli::is_terminal(STDOUT_FILENO)) {
    error("refusing to write a binary archive to a terminal");
    hint("redirect standard output or pipe it into gp-fold, or give '-o FILE' ('-o -' forces it)");
    return gp::cli::kExitUsage;
  }
  std::stop_source stop;
  SignalWatcher signals(stop);
  auto result = runtime::run_session(driver_options(a, *modes), stop.get_token());
  if (!result) {
    error(result.error().message);
    return gp::cli::kExitFailure;
  }
  if (result->stopped) info(1, "stopped by signal: writing what the profilers collected");
  for (const auto& t : result->targets) print_result(t);
  result->session.header.argv = argv;
  result->session.header.producer = "gp-runtime";
  result->session.header.producer_version = kVersion;
  int status = outcome(*result, a);
  int written = write_archive(a, result->session);
  if (written != gp::cli::kExitOk) status = written;
  if (result->abandoned_threads) {
    // A hung profiler thread still runs: leave without static destructors racing it.
    std::fflush(nullptr);
    ::_exit(status);
  }
  return status;
}

}  // namespace gp::runtime_tool
