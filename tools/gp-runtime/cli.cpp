// gp-runtime's options: gp-record's -d/-F/-p/-o, gProfiler's runtime mode spellings.
#include "cli.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "gp/runtime/java_safemode.h"
#include "gp/runtime/registry.h"

namespace gp::runtime_tool {

using gp::cli::ValueHint;
using runtime::Runtime;

namespace {

std::string mode_help(Runtime r) {
  const auto& m = runtime::runtime_modes(r);
  std::string values;
  for (auto v : m.modes) values += (values.empty() ? "" : "|") + std::string(v);
  std::string help = "Profiler for " + std::string(runtime::runtime_name(r)) +
                     " processes: " + values + " (default " + std::string(m.default_mode) + ")";
  if (r == Runtime::java) help += "; auto: async-profiler when installed, else JFR";
  if (r == Runtime::python) help += "; auto: py-spy when installed, else gp's sampler";
  if (r == Runtime::php) help += "; auto: phpspy when installed, else gp's sampler (PHP 8.2)";
  return help;
}

void add_mode(CLI::App& app, RuntimeArgs& args, Runtime r) {
  const auto& m = runtime::runtime_modes(r);
  args.modes[r] = std::string(m.default_mode);
  std::string name = "--" + std::string(m.option) + "-mode";
  auto* opt = app.add_option(name, args.modes[r], mode_help(r))->type_name("MODE");
  opt->check([r](const std::string& value) -> std::string {
    auto normal = runtime::normalize_mode(r, value);
    if (normal) return {};
    const std::string& why = normal.error().message;
    return "invalid value '" + value + "': " + why.substr(why.find("': ") + 3);
  });
  gp::cli::choices(opt, runtime::accepted_mode_values(r));
  args.disabled[r] = false;
  app.add_flag("--no-" + std::string(m.option), args.disabled[r],
               "Do not profile " + std::string(runtime::runtime_name(r)) + " processes (= " + name +
                   " disabled)");
}

}  // namespace

void add_cli(CLI::App& app, RuntimeArgs& args) {
  app.add_option("-d,--duration", args.duration,
                 "Seconds to profile (default: until SIGINT/SIGTERM)")
      ->type_name("SECONDS")
      ->check(gp::cli::positive_number());
  app.add_option("-F,--frequency", args.frequency,
                 "Samples per second per process (profilers may clamp)")
      ->type_name("HZ")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("-p,--pids", args.pids,
                 "Only these processes (comma-separated or repeated); default: all")
      ->type_name("PID")
      ->delimiter(',')
      ->check(gp::cli::positive_number());
  gp::cli::hint_value(app.add_option("-o,--output", args.output,
                                     "Archive to write, '-' for stdout (default; never a terminal)")
                          ->type_name("FILE"),
                      ValueHint::archive);
  app.add_flag("--no-compress", args.no_compress, "Write the archive without LZ4 compression");
  for (Runtime r : runtime::all_runtimes()) add_mode(app, args, r);
  auto* no_spawned = app.add_flag("--no-profile-spawned-processes", args.no_spawned,
                                  "Profile only the processes running at the start (default: also "
                                  "those that start during the session)");
  app.add_flag("--profile-spawned-processes", args.spawned_flag,
               "Also profile processes that start during the session (the default)")
      ->excludes(no_spawned);
  app.add_flag("--disable-application-identifiers", args.no_app_ids,
               "Do not compute appids (gunicorn/uwsgi/celery app, script, jar, main class)");
  app.add_flag("--disable-application-metadata", args.no_app_metadata,
               "Do not collect app metadata (exe, arch, runtime version from '<exe> --version')");
  app.add_flag("--no-python-versions", args.no_python_versions,
               "Python frames without gProfiler's package suffix: by default a frame of an "
               "installed package reads 'func (file.py:12 [pkg==1.0])', one of the standard "
               "library '[standard-library==3.11.2]'");
  app.add_option("--min-duration", args.min_duration,
                 "Leave out processes that started less than this many seconds before they are "
                 "found (gProfiler's --min-duration)")
      ->type_name("SECONDS")
      ->check(CLI::Range(1u, 1u << 30));
  app.add_option("--max-processes", args.max_processes,
                 "Profile at most N processes per runtime: the busiest by CPU over 0.1 s when "
                 "more are found (gProfiler's --max-processes-runtime-profiler)")
      ->type_name("N")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  gp::cli::choices(app.add_option("--java-async-profiler-mode", args.ap_mode,
                                  "asprof's event: cpu (perf events), itimer, or auto (cpu where "
                                  "perf events can be opened)")
                       ->type_name("MODE")
                       ->capture_default_str(),
                   {"auto", "cpu", "itimer"});
  gp::cli::choices(
      app.add_option("--java-async-profiler-features", args.ap_features,
                     "asprof's stack walking features (-F): vtable, comptask; probesp "
                     "(gProfiler's async-profiler build only) is accepted and left out")
          ->type_name("LIST")
          ->delimiter(',')
          ->capture_default_str(),
      {"probesp", "vtable", "comptask"});
  app.add_option("--java-async-profiler-args", args.ap_args,
                 "More asprof options, split at spaces (e.g. '--cstack dwarf -j 512')")
      ->type_name("ARGS");
  app.add_option("--java-jattach-timeout", args.jattach_timeout,
                 "Seconds each jcmd or asprof command may take before it is abandoned and the "
                 "JVM reported failed (gProfiler's --java-jattach-timeout)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(1u, 86400u));
  app.add_flag("--java-include-method-modifiers", args.method_modifiers,
               "Java frames under JFR start with the method's modifiers, as gProfiler's "
               "'private static Fibonacci.fibonacci(I)J_[j]' (asprof has no such option)");
  gp::cli::choices(
      app.add_option("--java-line-numbers", args.line_numbers,
                     "line-of-function: Java frames under JFR name the line the method was at, "
                     "'Fibonacci.fibonacci:7(I)J_[j]' as gProfiler (asprof has no such format)")
          ->type_name("MODE")
          ->capture_default_str(),
      {"none", "line-of-function"});
  app.add_flag("--java-collect-thread-names", args.thread_names,
               "Java stacks start with their thread's frame, '[main tid=1234]', as gProfiler's");
  app.add_option("--java-collect-jvm-flags", args.jvm_flags,
                 "The JVM flags in the app metadata's jvm_flags (JFR): default (those not set by "
                 "default), all, none, or a comma-separated list of names")
      ->type_name("FLAGS")
      ->capture_default_str();
  app.add_flag("--java-no-version-check", args.no_version_check,
               "Attach to JVMs the Java engine is not known to support (a JDK older than 7; "
               "for JFR older than 8u262 or 11 by its release file, or run with "
               "-XX:-FlightRecorder), skipped by default as gProfiler's version check does");
  app.add_option("--java-safemode", args.safemode,
                 "gProfiler's safemode causes (comma-separated; given alone: all; '' none) that "
                 "turn Java profiling off for the rest of the run: gp-runtime acts on hserr (a "
                 "profiled JVM that went down wrote an hs_err file); the kernel-reported causes "
                 "(profiled-oom, profiled-signaled, general-*, pid-in-kernel-messages) are "
                 "watched by gp-profile across sessions, through --java-safemode-state (default: "
                 "profiled-oom,profiled-signaled,hserr)")
      ->type_name("LIST")
      ->expected(0, 1)
      ->default_str("all")
      ->check([](const std::string& text) -> std::string {
        std::vector<std::string> unknown;
        gp::runtime::java_safemode_causes(text, &unknown);
        return unknown.empty() ? std::string() : "unknown Java safemode option '" + unknown[0] + "'";
      });
  app.add_flag("--java-full-hserr", args.full_hserr,
               "Log the whole hs_err file of a profiled JVM that went down, not its excerpt "
               "(vm_info, siginfo, problematic frame, native frames, container information)");
  gp::cli::hint_value(
      app.add_option("--java-safemode-state", args.safemode_state,
                     "Directory keeping the Java safemode state between runs (gp-profile gives "
                     "one per run): 'disabled' holds the cause once Java profiling is off, "
                     "hserr-PID.log the hs_err report of each crashed JVM, profiled/PID marks "
                     "each JVM profiled (for gp-profile's kernel-log and process-exit watch)")
          ->type_name("DIR"),
      gp::cli::ValueHint::directory);
  app.add_option("--alloc-interval", args.alloc_interval,
                 "Profile Java allocations instead of CPU time, one sample per BYTES allocated, "
                 "stacks weighted in bytes with the allocated class as leaf (gProfiler's --mode "
                 "allocation; the other runtimes are off)")
      ->type_name("BYTES")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--php-proc-filter", args.php_proc_filter,
                 "PHP processes to profile: those whose comm matches this extended regex, as "
                 "phpspy's 'pgrep' does in gProfiler ('php' for the CLI)")
      ->type_name("REGEX")
      ->capture_default_str();
  app.add_option("--python-pyspy-process", args.python_pids,
                 "Profile these processes as Python (comma-separated or repeated) even when gp "
                 "does not recognise them as Python by their exe or libraries, as gProfiler's")
      ->type_name("PID")
      ->delimiter(',')
      ->check(gp::cli::positive_number());
  app.add_flag("--java-collect-spark-app-name-as-appid", args.spark_app_name,
               "A Spark executor's Java appid ends with ', spark: <spark.app.name>' from its "
               "__spark_conf__/__spark_conf__.properties, as gProfiler's");
  app.add_option("--app-id-args-filter", args.app_id_args_filters,
                 "Java appids add the JVM options that match this regex (repeatable), e.g. "
                 "'java: app.jar (-Dservice=web)', as gProfiler's")
      ->type_name("REGEX")
      ->check([](const std::string& text) -> std::string {
        try {
          std::regex r(text);
        } catch (const std::regex_error& e) {
          return "invalid regex '" + text + "': " + e.what();
        }
        return {};
      });
  app.add_option("--grace", args.grace,
                 "Seconds profilers get to hand in their results after the session ends; one that "
                 "takes longer is reported as an error")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::runtime_tool
