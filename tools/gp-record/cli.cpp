// gp-record's options (bcc profile's and gProfiler's spellings where they exist).
#include "cli.h"

#include <algorithm>

#include "sampler.h"

namespace gp::record_tool {

using gp::cli::ValueHint;

bool parse_cpu_list(const std::string& text, std::vector<int>* cpus) {
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    char* end = nullptr;
    long first = std::strtol(part.c_str(), &end, 10);
    long last = first;
    if (end == part.c_str() || first < 0) return false;
    if (*end == '-') {
      const char* rest = end + 1;
      last = std::strtol(rest, &end, 10);
      if (end == rest || last < first) return false;
    }
    if (*end != '\0' || last > 4095) return false;
    for (long cpu = first; cpu <= last; ++cpu) cpus->push_back(static_cast<int>(cpu));
  }
  return !cpus->empty();
}

// Samples per CPU between default flushes: 4 s at 999 Hz. A flush costs the recorder about the
// same whatever it carries, and the keys a busy thread repeats are drained once per flush, not
// once per 2 s (2-CPU VM, 999 Hz, two python3 loops unwound with tables: 0.39 ms of CPU a second
// flushing every 4 s against 0.59 every 2 s (medians), and a quarter fewer archive bytes).
constexpr double kFlushSamplesPerCpu = 4000.0;

double expected_sample_rate(const RecordArgs& args) {
  if (args.period == 0) return std::max(1u, args.frequency);
  if (args.event == "cpu-clock" || args.event == "task-clock")
    return std::max(1.0, 1e9 / static_cast<double>(args.period));
  return kCountedEventRate;
}

double flush_interval_seconds(const RecordArgs& args, size_t cpus) {
  if (args.flush_interval > 0) return args.flush_interval;
  const double hz = expected_sample_rate(args);
  // Never longer than the CPUs take to fill the sample map with distinct stacks.
  const double fill =
      args.stack_storage_size / (hz * static_cast<double>(std::max<size_t>(1, cpus)));
  return std::clamp(std::min(kFlushSamplesPerCpu / hz, fill), 1.0, 10.0);
}

void add_cli(CLI::App& app, RecordArgs& args) {
  auto* frequency =
      app.add_option("-F,--frequency", args.frequency,
                     "Samples per second per CPU (up to kernel.perf_event_max_sample_rate)")
          ->type_name("HZ")
          ->capture_default_str()
          ->check(CLI::Range(1u, 1000000u));
  app.add_option("--period", args.period,
                 "Sample every N events instead of at a frequency (nanoseconds for cpu-clock and "
                 "task-clock)")
      ->type_name("N")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62))
      ->excludes(frequency);
  app.add_option("-d,--duration", args.duration,
                 "Seconds to record (default: until SIGINT/SIGTERM; with -c, per session: 60)")
      ->type_name("SECONDS")
      ->check(gp::cli::positive_number());
  app.add_option("-p,--pid", args.pids,
                 "Only these processes (comma-separated or repeated); without -c the recording "
                 "ends once all have exited")
      ->type_name("PID")
      ->delimiter(',')
      ->check(gp::cli::positive_number());
  app.add_option("-t,--tid", args.tids,
                 "Only these threads (comma-separated or repeated); without -c the recording ends "
                 "once all have exited")
      ->type_name("TID")
      ->delimiter(',')
      ->check(gp::cli::positive_number());
  gp::cli::hint_value(
      app.add_option("--cgroup", args.cgroups,
                     "Only tasks in this cgroup v2 directory (and below); repeat for several "
                     "(at most 64)")
          ->type_name("DIR")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll),
      ValueHint::directory);
  app.add_option("-C,--cpu", args.cpus, "Only these CPUs, e.g. 0,2-3")->type_name("LIST");
  auto* user =
      app.add_flag("-U,--user-only", args.user_only, "User stacks only (no kernel frames)");
  app.add_flag("-K,--kernel-only", args.kernel_only,
               "Kernel stacks only, and only samples taken in the kernel")
      ->excludes(user);
  app.add_flag("-I,--include-idle", args.include_idle, "Keep samples of the idle task (pid 0)");
  app.add_option("--stack-storage-size", args.stack_storage_size,
                 "Unique stacks (and sample slots) per flush interval in the kernel")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(64u, 1u << 24));
  gp::cli::hint_value(
      app.add_option(
             "-o,--output", args.output,
             "Archive to write, '-' for stdout (default; never a terminal; with a command: "
             "gp.gpa); %h host, %t time")
          ->type_name("FILE"),
      ValueHint::archive);
  auto* cont =
      app.add_flag("-c,--continuous", args.continuous,
                   "Record session after session, one per --duration (SIGUSR2 ends one early)");
  gp::cli::hint_value(
      app.add_option("--output-dir", args.output_dir, "With -c: one archive file per session here")
          ->type_name("DIR"),
      ValueHint::directory)
      ->needs(cont);
  app.add_flag("--rotating-output", args.rotating_output,
               "With --output-dir: keep only the newest session's file")
      ->needs(cont);
  app.add_flag("--no-compress", args.no_compress, "Write the archive without LZ4 compression");
  app.add_flag("--redact-cmdline", args.redact_cmdline,
               "Hide secret-looking values in recorded command lines");
  app.add_option("--flush-interval", args.flush_interval,
                 "Seconds between chunks written (what a kill can lose); default: the time for "
                 "4000 samples per CPU, 1 to 10, and 1 after a new process")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.05, 3600.0));
  gp::cli::choices(
      app.add_option("-e,--event", args.event,
                     "Sampling event: a name, a raw event of the CPU's PMU (r01b7), or an event "
                     "of any PMU in /sys/bus/event_source/devices (cpu/event=0xc0,umask=0/), as "
                     "perf's -e, each with perf's modifiers :p/:pp/:ppp (precise), :u and :k")
          ->type_name("EVENT")
          ->capture_default_str()
          ->check(CLI::Validator(
              [](std::string& in) -> std::string {
                auto spec = parse_event(in);
                return spec ? "" : "'" + in + "': " + spec.error().message;
              },
              "EVENT")),
      perf_event_names(), false);
  gp::cli::choices(
      app.add_option("--sampler", args.sampler, "Sampling engine: auto (bpf, else perf), bpf, perf")
          ->type_name("ENGINE")
          ->capture_default_str(),
      {"auto", "bpf", "perf"});
  gp::cli::choices(
      app.add_option("--stack-walker", args.stack_walker,
                     "Who walks user stacks in the BPF sampler: auto (gp where the kernel has "
                     "bpf_loop), gp, kernel")
          ->type_name("WALKER")
          ->capture_default_str(),
      {"auto", "gp", "kernel"});
  gp::cli::choices(
      app.add_option(
             "--unwind", args.unwind,
             "User stacks: auto (unwind tables from .eh_frame where a binary has them, frame "
             "pointers elsewhere), dwarf (the same), fp (frame pointers only)")
          ->type_name("MODE")
          ->capture_default_str(),
      {"auto", "dwarf", "fp"});
  app.add_option("--unwind-memory", args.unwind_memory,
                 "MiB of kernel memory for unwind tables (allocated at start; unused tables are "
                 "evicted to stay within it)")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--unwind-copies", args.unwind_copies,
                 "Samples a second per CPU taken before their process's unwind tables whose user "
                 "stack is copied (--unwind-copy-size) and unwound once the tables are loaded; "
                 "past it, and with 0, they are walked with frame pointers")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(0u, 100000u));
  app.add_option("--unwind-copy-size", args.unwind_copy_size,
                 "Bytes of user stack each of those copies takes at most, from the stack "
                 "pointer up: frames above them are cut (perf's --call-graph dwarf,SIZE)")
      ->type_name("BYTES")
      ->capture_default_str()
      ->check(CLI::Range(uint32_t{kMinUnwindCopySize}, uint32_t{kMaxUnwindCopySize}));
  gp::cli::hint_value(
      app.add_option("--unwind-cache", args.unwind_cache,
                     "Directory of unwind tables kept between runs, by build-id (created 0700; "
                     "refused when a symlink or writable by others), or 'none'")
          ->type_name("DIR")
          ->capture_default_str(),
      ValueHint::directory);
  app.add_flag("--python-frames{on}", args.python_frames,
               "CPython 3.8-3.15 processes: walk their Python frames with the native stack and "
               "put each evaluation loop's frames next to it (gProfiler's PyPerf stacks: _[p] "
               "Python, _[pn] native, _[k] kernel frames; the BPF sampler on Linux 5.17+). "
               "With =auto, where the walk cannot run: a line that says why and stacks without "
               "Python frames, not an error")
      ->option_text("[=auto]")
      ->check(CLI::IsMember({"on", "auto"}));
  app.add_flag("--no-python-versions", args.no_python_versions,
               "With --python-frames: leave out gProfiler's package and version of a Python "
               "frame's file ('[name==version]' of a distribution installed in site-packages "
               "or dist-packages, '[standard-library==X.Y.Z]')");
  app.add_option("command", args.command,
                 "Run this command (after --, with its arguments) and record it and the "
                 "processes it starts until it exits; gp-record exits with its status")
      ->type_name("COMMAND");
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::record_tool
