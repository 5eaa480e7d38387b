// gp-profile's command line: gProfiler's parser (gprofiler.md §9). Names and defaults come from
// the table generated from gProfiler's source (gprofiler_options.h); gp's help and handling of
// each option are here. An option of the table gp has no code for is accepted and named at
// start-up (add_rest): with the reason it has no effect (no_effect.h), or as not implemented.
// Values are kept as typed and checked by check.cpp, so that every refusal carries gProfiler's
// message.
#include "cli.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "gprofiler_options.h"
#include "no_effect.h"

#include "gp/runtime/registry.h"

namespace gp::profile_tool {

void finish(CLI::App& app, ProfileArgs& args);  // check.cpp

namespace {

using gp::cli::ValueHint;

class Builder {
 public:
  Builder(CLI::App& app, ProfileArgs& args) : app_(app), args_(args) {}

  // A valued option kept as typed in args.values[key]. Without a shown default: gProfiler's.
  CLI::Option* value(const std::string& names, const std::string& display, ValueType type,
                     const std::string& type_name, const std::string& help,
                     const std::string& shown_default = "") {
    std::string key = long_name(names);
    const GprofilerOption* g = gprofiler(names);
    auto* o = app_.add_option(names, args_.values[key], help)->type_name(type_name);
    if (!shown_default.empty()) {
      o->default_str(shown_default);
    } else if (g != nullptr && g->has_default && *g->default_value != '\0') {
      o->default_str(g->default_value);
    }
    args_.checks.push_back({key, display, type, 0, 0, {}});
    return o;
  }
  CLI::Option* range(const std::string& names, const std::string& display, long lo, long hi,
                     const std::string& help, const std::string& shown_default) {
    auto* o =
        value(names, display, ValueType::integer_range,
              "[" + std::to_string(lo) + "-" + std::to_string(hi - 1) + "]", help, shown_default);
    args_.checks.back().lo = lo;
    args_.checks.back().hi = hi;
    return o;
  }
  CLI::Option* choice(const std::string& names, const std::string& display,
                      const std::vector<std::string>& values, const std::string& help,
                      const std::string& shown_default = "", ValueType type = ValueType::choice) {
    auto* o = value(names, display, type, type == ValueType::choice ? "CHOICE" : "LIST", help,
                    shown_default);
    args_.checks.back().choices = values;
    gp::cli::choices(o, values, false);
    return o;
  }
  // An option that may be given several times (argparse append/extend): args.lists[key].
  CLI::Option* list(const std::string& names, const std::string& display, ValueType type,
                    const std::string& type_name, const std::string& help) {
    std::string key = long_name(names);
    gprofiler(names);
    auto* o = app_.add_option(names, args_.lists[key], help)
                  ->type_name(type_name)
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    args_.checks.push_back({key, display, type, 0, 0, {}});
    return o;
  }
  CLI::Option* flag(const std::string& names, const std::string& help) {
    gprofiler(names);
    return app_.add_flag(names, args_.flags[long_name(names)], help);
  }
  // gp-profile has no counterpart: accepted, and named in the start-up warning when given.
  CLI::Option* unimplemented(CLI::Option* o) {
    args_.unimplemented_options.emplace_back("--" + o->get_lnames().front(), o);
    return o;
  }

  // Every option of gProfiler's parser that gp-profile has no code for: accepted with its
  // gProfiler names, value form, default and help, checked as gProfiler checks it, and named in
  // the start-up warning when given.
  void add_rest() {
    for (const GprofilerOption& g : kGprofilerOptions) {
      if (*g.subcommand != '\0') continue;
      std::string names = g.names;
      if (app_.get_option_no_throw("--" + long_name(names)) != nullptr) continue;
      auto reason = no_effect_reason(long_name(names));
      std::string help =
          std::string(g.help) + (reason ? " (no effect in gp-profile: " + std::string(*reason) + ")"
                                        : std::string(" (not implemented by gp-profile, ignored)"));
      std::string action = g.action;
      std::string display = names;
      for (char& c : display) c = c == ',' ? '/' : c;
      ValueCheck check = value_check(g);
      std::string metavar = g.dest;  // argparse's: the dest in capitals
      for (char& c : metavar) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      CLI::Option* o = nullptr;
      if (action == "store_true" || action == "store_false" || action == "store_const") {
        o = flag(names, help);
      } else {
        o = action == "append" || action == "extend"
                ? list(names, display, check.type, metavar, help)
                : value(names, display, check.type, metavar, help);
        if (std::string(g.nargs) == "?") o->expected(0, 1);
        args_.checks.back().lo = check.lo;
        args_.checks.back().hi = check.hi;
        args_.checks.back().choices = check.choices;
        if (!check.choices.empty()) gp::cli::choices(o, check.choices, false);
      }
      if (*g.group != '\0') o->group(g.group);
      unimplemented(o);
    }
  }

 private:
  // The table's entry of these names; gp-profile's names must include all of gProfiler's.
  static const GprofilerOption* gprofiler(const std::string& names) {
    const GprofilerOption* g = find_gprofiler_option("--" + long_name(names));
    if (g == nullptr) return nullptr;
    std::string ours = "," + names + ",";
    std::string theirs = g->names;
    for (size_t at = 0; at <= theirs.size();) {
      size_t end = std::min(theirs.find(',', at), theirs.size());
      if (ours.find("," + theirs.substr(at, end - at) + ",") == std::string::npos)
        throw std::logic_error("gp-profile's " + names + " lacks gProfiler's name " +
                               theirs.substr(at, end - at));
      at = end + 1;
    }
    return g;
  }
  // How check.cpp checks a value of this gProfiler type (argparse's type= and choices=).
  static ValueCheck value_check(const GprofilerOption& g) {
    ValueCheck c;
    std::string type = g.type;
    if (*g.choices != '\0') {
      c.type = ValueType::choice;
      c.choices = split(g.choices);
    } else if (type == "positive_integer") {
      c.type = ValueType::positive_integer;
    } else if (type == "nonnegative_integer") {
      c.type = ValueType::nonnegative_integer;
    } else if (type == "int") {
      c.type = ValueType::integer;
    } else if (type == "integers_list") {
      c.type = ValueType::integers_list;
    } else if (type.rfind("integer_range(", 0) == 0) {
      c.type = ValueType::integer_range;
      c.lo = std::stol(type.substr(14));
      c.hi = std::stol(type.substr(type.find(',') + 1));
    }
    return c;
  }
  static std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= s.size();) {
      size_t end = std::min(s.find(',', at), s.size());
      out.push_back(s.substr(at, end - at));
      at = end + 1;
    }
    return out;
  }

  static std::string long_name(const std::string& names) {
    size_t at = names.find("--");
    std::string rest = names.substr(at + 2);
    return rest.substr(0, rest.find(','));
  }
  CLI::App& app_;
  ProfileArgs& args_;
};

void add_general(Builder& b, CLI::App& app, ProfileArgs& args) {
  gp::profile::Options& o = args.options;
  gp::cli::hint_value(
      app.add_option("--pid-file", args.pid_file, "Write the process id here while running")
          ->type_name("FILE")
          ->capture_default_str(),
      ValueHint::file);
  gp::cli::hint_value(app.add_option("--config", args.config_file,
                                     "Config file: one 'option = value' per line (default: " +
                                         std::string(kDefaultConfigFile) + " when it exists)")
                          ->type_name("FILE"),
                      ValueHint::file);
  b.value("-f,-F,--profiling-frequency", "-f/--profiling-frequency", ValueType::positive_integer,
          "HZ", "Samples per second per CPU (cpu mode only)", "11");
  b.value("-d,--profiling-duration", "-d/--profiling-duration", ValueType::positive_integer,
          "SECONDS", "Seconds of one profiling session", "60");
  b.value("--min-duration", "--min-duration", ValueType::positive_integer, "SECONDS",
          "Runtime profilers leave out processes younger than this when found", "0");
  b.flag("--insert-dso-name", "Name native frames 'function (dso)' in the .col and flamegraph");
  gp::cli::hint_value(app.add_option("-o,--output-dir", o.output_dir,
                                     "Write profile_<time>.col (and .html) here, with the links "
                                     "last_profile.col and last_flamegraph.html")
                          ->type_name("DIR"),
                      ValueHint::directory);
  b.flag("--flamegraph", "Write the .html flamegraph with -o (the default)");
  b.flag("--no-flamegraph", "Do not write the .html flamegraph");
  b.choice("--mode", "--mode", {"cpu", "allocation", "none"},
           "Profiling mode: cpu; allocation (Java allocations, weighted in bytes, through JFR or "
           "async-profiler; the system and other runtime profilers are off); none (no profiler)",
           "cpu");
  b.value("--alloc-interval", "--alloc-interval", ValueType::size, "SIZE",
          "Allocation sampling interval, e.g. 100kb (--mode allocation only; JFR on JDK 16+ "
          "takes it as a throttle of 64 GiB/SIZE samples a second, each weighted by its bytes)",
          "2mb");
  app.add_flag("--rotating-output", o.rotating_output,
               "Keep only the newest profile in --output-dir");
  b.list("--pids", "--pids", ValueType::integers_list, "PID,...",
         "Only these processes (comma-separated, may be repeated; default: all)");
  b.value("--max-processes-runtime-profiler", "--max-processes-runtime-profiler",
          ValueType::positive_integer, "N",
          "Each runtime profiler takes at most N processes, the busiest by CPU (0: all)", "0");
  b.value("--skip-system-profilers-above", "--skip-system-profilers-above",
          ValueType::positive_integer, "N",
          "No system profiler (gp-record) in a session that starts with more than N processes "
          "(0: always one)",
          "0");
  app.add_flag("--rootless", o.rootless,
               "Run without root (needs --pids; gp-record then samples with perf events)");
}

// --perf-mode and the perf profiler's options (gprofiler/profilers/perf.py).
void add_perf(Builder& b, CLI::App& app, ProfileArgs& args) {
  auto* mode =
      b.choice("--perf-mode", "--perf-mode", {"fp", "dwarf", "smart", "disabled", "none"},
               "System profiler: smart (default: whole stacks, unwound with .eh_frame tables "
               "where binaries have them, frame pointers elsewhere), dwarf (the same), fp "
               "(frame pointers only), disabled/none (runtime stacks only)",
               "smart");
  (void)mode;
  b.flag("--no-perf", "Same as --perf-mode disabled");
  b.flag("--perf-use-cgroups",
         "gp-record samples only the cgroups (v2) with the most CPU since the previous session "
         "(the first: over 1 s), instead of --pids; named in the log (-v)");
  b.value("--perf-max-cgroups", "--perf-max-cgroups", ValueType::integer, "N",
          "Cgroups sampled with --perf-use-cgroups", "50");
  b.value("--perf-max-docker-containers", "--perf-max-docker-containers", ValueType::integer, "N",
          "With --perf-use-cgroups: the N busiest Docker containers first, then other cgroups",
          "0");
  b.value("--perf-dwarf-stack-size", "--perf-dwarf-stack-size", ValueType::integer, "BYTES",
          "With --perf-mode dwarf or smart: the bytes of user stack gp-record copies for a sample "
          "taken before its process's unwind tables are loaded, unwound from the copy once they "
          "are (gp-record --unwind-copy-size, 512 to 16384; at most 65528 as gProfiler). Other "
          "samples are unwound in the kernel, whole",
          "16384");
  b.flag("--perf-no-memory-restart",
         "With --continuous: never restart gp-record for its memory (by default, as gProfiler's "
         "perf, it is started again as a session starts when it has run an hour and holds 512 "
         "MiB resident)");
  (void)app;
  (void)args;
}

// --<runtime>-mode and --no-<runtime> for every runtime gp-runtime knows (its registry holds
// gProfiler's spellings and defaults, so both tools accept the same values).
void add_runtimes(CLI::App& app, ProfileArgs& args) {
  const auto runtimes = gp::runtime::all_runtimes();
  args.runtimes.clear();
  args.runtimes.reserve(runtimes.size());  // options keep pointers into this vector
  for (auto r : runtimes) {
    const auto& modes = gp::runtime::runtime_modes(r);
    args.runtimes.push_back({std::string(modes.option), std::string(modes.default_mode), false});
  }
  for (size_t i = 0; i < runtimes.size(); ++i) {
    auto& rt = args.runtimes[i];
    std::string name(gp::runtime::runtime_name(runtimes[i]));
    gp::cli::choices(app.add_option("--" + rt.option + "-mode", rt.mode,
                                    "Profiler for " + name + " processes, run by gp-runtime")
                         ->type_name("MODE")
                         ->capture_default_str(),
                     gp::runtime::accepted_mode_values(runtimes[i]), false);
    app.add_flag("--no-" + rt.option, rt.disabled, "Same as --" + rt.option + "-mode disabled");
  }
}

// The Java profiler's options (gprofiler/profilers/java.py). asprof's own options go to
// gp-runtime; the rest have no counterpart.
void add_java(Builder& b) {
  b.choice("--java-async-profiler-mode", "--java-async-profiler-mode",
           {"cpu", "itimer", "alloc", "auto"},
           "async-profiler's event: cpu, itimer, auto (cpu where perf events open); alloc "
           "(Java allocations every 1e9/-f bytes, as gProfiler; otherwise as --mode allocation)",
           "auto");
  b.choice(
      "--java-async-profiler-features", "--java-async-profiler-features",
      {"probesp", "vtable", "comptask"},
      "async-profiler's stack walking features (asprof -F; probesp is gProfiler's build's only)",
      "probesp,vtable", ValueType::enum_list);
  b.value("--java-async-profiler-args", "--java-async-profiler-args", ValueType::text, "ARGS",
          "More asprof options for its start command, split at spaces");
  b.value("--java-jattach-timeout", "--java-jattach-timeout", ValueType::positive_integer,
          "SECONDS",
          "Seconds each jcmd (JFR) or asprof command may take; past it the JVM's profile is "
          "an error frame");
  b.flag("--java-include-method-modifiers",
         "Java frames start with the method's modifiers ('private static "
         "Fibonacci.fibonacci(I)J_[j]'; JFR only: asprof has no such option)");
  b.flag("--java-no-version-check",
         "Profile JVMs the Java engine is not known to support, skipped by default as "
         "gProfiler's version check does ('[Profiling skipped: profiling this JVM is not "
         "supported]'): a JDK older than 7, and under JFR one older than 8u262 or 11 (by its "
         "release file) or run with -XX:-FlightRecorder");
  b.value("--java-safemode", "--java-safemode", ValueType::text, "LIST",
          "Causes that turn Java profiling off for the rest of the run, as gProfiler's "
          "(comma-separated; given alone: all; '' none; default: "
          "profiled-oom,profiled-signaled,hserr): a profiled JVM the kernel OOM-killed "
          "(profiled-oom, from /dev/kmsg), that died of SIGKILL, SIGSEGV or SIGABRT "
          "(profiled-signaled, from the kernel's process events) or that went down and wrote an "
          "hs_err file (hserr); general-oom, general-signaled, pid-in-kernel-messages as "
          "gProfiler's. Every JVM then gets '[Profiling skipped: disabled due to CAUSE]'",
          "all")
      ->expected(0, 1);
  b.flag("--java-full-hserr",
         "Log the whole hs_err file of a profiled JVM that went down, not gProfiler's excerpt "
         "(vm_info, siginfo, problematic frame, native frames, container information)");
  b.choice("--java-line-numbers", "--java-line-numbers", {"none", "line-of-function"},
           "line-of-function: Java frames name the line the method was at "
           "('Fibonacci.fibonacci:7(I)J_[j]'; JFR only: asprof has no such format)",
           "none");
  b.flag("--java-collect-thread-names",
         "Java stacks start with their thread's frame ('[main tid=1234]'), as gProfiler's");
  b.flag("--java-collect-spark-app-name-as-appid",
         "A Spark executor's Java appid ends with ', spark: <spark.app.name>' (from its "
         "__spark_conf__/__spark_conf__.properties; 'app name not found' without it)");
  b.value("--java-collect-jvm-flags", "--java-collect-jvm-flags", ValueType::text, "FLAGS",
          "The JVM flags in the Java app metadata's jvm_flags (JFR): default (those not set by "
          "default), all, none, or a comma-separated list of names",
          "default")
      ->expected(0, 1);
}

void add_python_php(Builder& b) {
  b.value("--python-skip-pyperf-profiler-above", "--python-skip-pyperf-profiler-above",
          ValueType::positive_integer, "N",
          "With --python-mode pyperf: when more than N Python processes run at start, PyPerf "
          "(gp-record's Python frames) is skipped and Python goes unprofiled, as gProfiler's "
          "(0: no limit)",
          "0");
  b.value("--pyperf-user-stacks-pages", "--pyperf-user-stacks-pages",
          ValueType::nonnegative_integer, "PAGES",
          "With --python-mode pyperf or auto: the pages (4 KiB) of user stack gp-record copies of "
          "a sample taken before its process's unwind tables are loaded, 1 to 4 "
          "(--perf-dwarf-stack-size's copy, which wins when given); later samples are unwound "
          "in the kernel, whole. 0: gp-record has no switch to drop native frames, said so");
  b.flag("--python-pyperf-verbose",
         "With --python-mode pyperf or auto: gp-record's debug diagnostics (-vv), its Python "
         "frame walk's counters among them, in gp-profile's -vv log");
  b.list("--python-pyspy-process", "--python-pyspy-process", ValueType::integers_list, "PID,...",
         "Profile these processes with gp-runtime's Python sampler even when they are not "
         "recognised as Python by their exe or libraries (e.g. a renamed interpreter), as "
         "gProfiler's; not with --python-mode pyperf (no py-spy then, as gProfiler)");
  b.flag("--no-python-versions",
         "Python frames without '[pkg==ver]': by default a frame of an installed package reads "
         "'func (file.py:12 [pkg==1.0])', one of the standard library "
         "'[standard-library==3.11.2]'");
  b.value("--php-proc-filter", "--php-proc-filter", ValueType::text, "REGEX",
          "PHP processes to profile: those whose comm matches this extended regex, as phpspy's "
          "'pgrep' does ('php' for the CLI)",
          "php-fpm");
}

void add_events_and_deprecated(Builder& b) {
  b.value("--perf-event", "--perf-event", ValueType::text, "EVENT",
          "Sample this event instead of CPU time: cpu-clock, task-clock, cycles, instructions, "
          "cache-misses, branch-misses (frame pointers only, no runtime profilers, as gProfiler)");
  b.value("--perf-event-period", "--perf-event-period", ValueType::integer, "N",
          "Sample every N events of --perf-event instead of at -f Hz (ns for the clocks)");
  gp::cli::hint_value(
      b.value("--hw-events-file", "--hw-events-file", ValueType::text, "FILE",
              "JSON file of custom PMU events, as gProfiler's: {\"NAME\": {\"ICX\": {\"raw\": "
              "\"r01b7\"}, ...}}; --perf-event NAME then samples the raw event of this host's "
              "platform (ICX, SPR, EMR, GNR or UNKNOWN) with gProfiler's precise modifier (:pp, "
              ":p for ocr.*; none in a VM); raw is any form of gp-record's -e"),
      ValueHint::file);
  // gProfiler's hardware metrics (hw_metrics.h).
  b.flag("--enable-hw-metrics-collection",
         "Collect hardware metrics with Intel PerfSpect (needs PerfSpect, installed separately "
         "from https://github.com/intel/PerfSpect, named by --perfspect-path): it runs once from "
         "the start, and each .col's header carries its summary (hwmetrics: metric -> mean) and "
         "page (htmlblob: gzip, base64) once it has written them, as gProfiler's");
  gp::cli::hint_value(
      b.value("--perfspect-path", "--perfspect-path", ValueType::text, "FILE",
              "The PerfSpect executable for --enable-hw-metrics-collection (gp-profile does not "
              "start when it is no file)"),
      ValueHint::file);
  b.value("--perfspect-duration", "--perfspect-duration", ValueType::positive_integer,
          "SECONDS", "Seconds PerfSpect collects (its 'metrics --duration')", "60");
  // gProfiler's deprecated no-ops: accepted and ignored, as gProfiler does.
  b.value("--spark-sample-period", "--spark-sample-period", ValueType::integer, "SECONDS",
          "Deprecated, ignored", "120");
  b.flag("--collect-spark-metrics", "Deprecated, ignored");
  b.flag("--databricks-job-name-as-service-name", "Deprecated, ignored");
}

void add_connectivity(Builder& b, CLI::App& app, ProfileArgs& args) {
  gp::profile::Options& o = args.options;
  const std::string group = "Connectivity";
  app.add_flag("-u,--upload-results", o.upload,
               "Upload each profile to the Performance Studio (needs --token, --service-name)")
      ->group(group);
  gp::cli::hint_value(app.add_option("--server-host", o.server_host, "Performance Studio base URL")
                          ->type_name("URL")
                          ->capture_default_str()
                          ->group(group),
                      ValueHint::url);
  gp::cli::hint_value(
      b.value("--api-server", "--api-server", ValueType::text, "URL",
              "Server of the remote logs (POST <scheme>://<host>/api/v1/logs)", kDefaultApiServer)
          ->group(group),
      ValueHint::url);
  gp::cli::hint_value(b.value("--glogger-server", "--glogger-server", ValueType::text, "URL",
                              "Deprecated alias of --api-server")
                          ->group(group),
                      ValueHint::url);
  b.value("--server-upload-timeout", "--server-upload-timeout", ValueType::positive_integer,
          "SECONDS", "Timeout of one upload request", "120")
      ->group(group);
  app.add_option("--token", o.token, "Studio API key (never printed; also GPROFILER_TOKEN)")
      ->group(group);
  app.add_option("--service-name", o.service_name, "Studio service name")->group(group);
  b.flag("--curlify-requests",
         "Log each Studio request as a curl command line (-v; body un-gzipped, token as ***)")
      ->group(group);
  app.add_flag("--no-verify", o.no_verify, "Do not verify the server's TLS certificate")
      ->group(group);
  gp::cli::hint_value(app.add_option("--spool-dir", o.spool_dir,
                                     "Keep sessions whose upload failed here, to send them first "
                                     "when the server is back (default: a directory of this run)")
                          ->type_name("DIR")
                          ->group(group),
                      ValueHint::directory);
  b.value("--spool-max-size", "--spool-max-size", ValueType::positive_integer, "BYTES",
          "Bound of the spool: the oldest sessions are dropped beyond it, with a warning",
          "104857600")
      ->group(group);
}

void add_process(Builder& b, CLI::App& app, ProfileArgs& args) {
  b.flag("--log-usage",
         "Log the CPU time and memory gp-profile and its children used, after each session");
  b.flag("--dont-disable-core-files", "Let the profilers gp-profile starts dump core");
  gp::cli::hint_value(app.add_option("--log-file", args.log_file,
                                     "Also append the log to this file (rotated by size)")
                          ->type_name("FILE")
                          ->capture_default_str(),
                      ValueHint::file);
  b.value("--log-rotate-max-size", "--log-rotate-max-size", ValueType::positive_integer, "BYTES",
          "Rotate the log file at this size", "5242880");
  b.value("--log-rotate-backup-count", "--log-rotate-backup-count", ValueType::positive_integer,
          "N", "Rotated log files kept", "1");
  b.flag("--dont-send-logs",
         "Do not send gp-profile's log to --api-server (sent with -u unless "
         "--profile-api-version v1; also when GPROFILER_DONT_SEND_LOGS is set to anything)");
  b.flag("--disable-container-names", "No container names in the .col (header and lines)");
  app.add_flag("--continuous,-c", args.options.continuous,
               "Profile session after session until SIGTERM/SIGINT");
  b.choice("--profile-api-version", "--profile-api-version", {"v1"},
           "v1: the Studio's legacy API (.col lines without the index and container frames)");
  b.flag("--disable-pidns-check", "Do not require the host's pid namespace");
  b.flag("--disable-metrics-collection", "Send no cpu_avg/mem_avg to the Studio");
  b.flag("--disable-metadata-collection",
         "Header metadata only hostname, profiling_mode and the sampling fields (the Studio "
         "refuses such profiles, as gProfiler's)");
  b.flag("--disable-application-identifiers",
         "No 'appid: ...' frames (gp-runtime's application identifiers)");
  b.list("--app-id-args-filter", "--app-id-args-filter", ValueType::text, "REGEX",
         "Java appids add the JVM options that match this regex (repeatable)");
  b.flag("--disable-application-metadata",
         "No application-metadata index frame in the .col (gp-fold --no-app-metadata, gp-runtime)");
  b.flag("--no-truncated-marker",
         "No '[truncated]' frame at the root of stacks whose unwinding was cut, in the .col and "
         "the flamegraph (gp-fold --no-truncated-marker)");
  b.value("--controller-pid", "--controller-pid", ValueType::integer, "PID",
          "Exit when this process exits");
  gp::cli::hint_value(
      b.value("--external-metadata", "--external-metadata", ValueType::text, "FILE",
              "JSON {\"static\": {...}, \"application\": {\"PID\": {...}}}: static goes in "
              "every header, each entry into that process's app metadata (used while at most 5 "
              "minutes old)"),
      ValueHint::file);
  b.flag("--profile-spawned-processes",
         "Also profile processes that start during a session (default: only those running at "
         "its start)");
  b.flag("--diagnostics",
         "After a session, at most every 15 minutes, log (-v) the running processes and the "
         "kernel log's last 100 lines");
  gp::cli::hint_value(b.value("--heartbeat-file", "--heartbeat-file", ValueType::text, "FILE",
                              "Touched as each --continuous session starts"),
                      ValueHint::file);
  b.flag("--enable-heartbeat-server",
         "Profile only as --api-server's commands say: a heartbeat every --heartbeat-interval "
         "seconds, start/stop commands acknowledged (needs -u, --token, --service-name)");
  b.value("--heartbeat-interval", "--heartbeat-interval", ValueType::positive_integer, "SECONDS",
          "Seconds between heartbeats", "30");
}

void add_subcommands(CLI::App& app, ProfileArgs& args) {
  auto* sub = app.add_subcommand(
      "upload-file", "Upload an existing .col file to the Performance Studio (gp-upload)");
  sub->fallthrough();  // --token & co. may come after the subcommand, as gProfiler allows
  gp::cli::hint_value(sub->add_option("--file-path", args.file_path, "The .col file to upload")
                          ->required()
                          ->check(CLI::ExistingFile),
                      ValueHint::file);
  auto* extract = app.add_subcommand(
      "extract-resources", "gProfiler's resource extraction (gp has none: a warning, exit 0)");
  extract->fallthrough();
  gp::cli::hint_value(
      extract->add_option("--resources-dest", args.resources_dest, "Where to extract them"),
      ValueHint::directory);
}

}  // namespace

void add_cli(CLI::App& app, ProfileArgs& args) {
  // argparse keeps the last value of an option given twice (and the environment and config
  // files rely on it: their values come before the command line's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Builder b(app, args);
  add_general(b, app, args);
  add_perf(b, app, args);
  add_runtimes(app, args);
  add_java(b);
  add_python_php(b);
  add_events_and_deprecated(b);
  add_connectivity(b, app, args);
  add_process(b, app, args);
  add_subcommands(app, args);
  app.add_option("command", args.options.command,
                 "Run this command (after --, with its arguments) and profile it and the "
                 "processes it starts until it exits; gp-profile exits with its status")
      ->type_name("COMMAND")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  gp::cli::add_common_options(app, args.common);
  b.add_rest();
  app.final_callback([&app, &args] {
    auto* gen = app.get_option_no_throw("--generate-completion");
    if (gen != nullptr && gen->count() > 0) return;  // only prints completions
    finish(app, args);
  });
}

}  // namespace gp::profile_tool
