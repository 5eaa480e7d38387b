#include "cli.h"

namespace gp::fold_tool {

void add_cli(CLI::App& app, FoldArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(
      app.add_option("input", args.inputs,
                     "Profiles to fold together: gp archives, gProfiler .col or folded "
                     "text; '-' for standard input (the default)")
          ->type_name("FILE"),
      ValueHint::archive);
  gp::cli::hint_value(
      app.add_option("-o,--output", args.output,
                     "File to write; '-' for standard output. Without --format, the "
                     "extension picks it: .col, .folded, .pb.gz/.pprof, .speedscope.json")
          ->capture_default_str(),
      ValueHint::file);
  gp::cli::choices(app.add_option("-f,--format", args.format,
                                  "Output format (default: col, or from the -o extension)")
                       ->type_name("FORMAT"),
                   {"col", "folded", "pprof", "speedscope"});
  gp::cli::choices(
      app.add_option("--profile-api-version", args.profile_api_version,
                     "col: v1 writes lines without the app-metadata index and container "
                     "frames, as gProfiler's --profile-api-version v1")
          ->type_name("VERSION")
          ->capture_default_str(),
      {"v1", "v2"});
  app.add_flag(
      "--no-app-metadata", args.no_app_metadata,
      "col: no application-metadata index frame (gProfiler's --disable-application-metadata)");
  app.add_flag("--no-container-names", args.no_container_names,
               "col: no container names in the header or the lines (gProfiler's "
               "--disable-container-names)");
  app.add_flag("--no-metadata", args.no_metadata,
               "col: the header's metadata holds only hostname, profiling_mode and the sampling "
               "fields (gProfiler's --disable-metadata-collection)");
  gp::cli::hint_value(
      app.add_option("--external-metadata", args.external_metadata,
                     "col: gProfiler's external metadata file: its \"static\" object "
                     "goes in the header, its \"application\" entries into their "
                     "pids' application metadata")
          ->type_name("FILE"),
      ValueHint::file);

  auto* pid = app.add_option("-p,--pid", args.pids,
                             "Only samples of these pids (comma-separated or repeated)")
                  ->delimiter(',')
                  ->allow_extra_args(false)  // one value per occurrence: "--pid 3 in.gpa"
                  ->type_name("PID");
  pid->check(gp::cli::non_negative_number());
  app.add_option("--comm", args.comms, "Only processes with this comm (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME");
  app.add_option("--container", args.containers,
                 "Only processes in this container, by name or id prefix (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME");
  auto* incl =
      app.add_flag("--include-idle", args.include_idle,
                   "Keep idle (pid 0, swapper) samples: the default for col, pprof, speedscope");
  auto* excl = app.add_flag("--exclude-idle", args.exclude_idle,
                            "Drop idle (pid 0, swapper) samples: the default for folded and --top");
  incl->excludes(excl);

  auto* wpid =
      app.add_flag("--with-pid", args.with_pid,
                   "folded, speedscope: process frames as comm-PID (stackcollapse-perf --pid)");
  auto* wtid =
      app.add_flag("--with-tid", args.with_tid,
                   "folded, speedscope: process frames as comm-PID/TID (stackcollapse-perf --tid)");
  wpid->excludes(wtid);
  app.add_flag("--kernel-delimiter", args.kernel_delimiter,
               "folded: a '-' frame between the user and kernel parts of a stack (bcc profile -d)");
  app.add_flag("--annotate", args.annotate,
               "folded: add gProfiler's kind suffixes (_[k] kernel, _[j] java, _[p] python, ...); "
               "col always has them");
  auto* user = app.add_flag("-U,--user-only", args.user_only,
                            "folded, speedscope, --top: user-space frames only");
  auto* kern = app.add_flag("-K,--kernel-only", args.kernel_only,
                            "folded, speedscope, --top: kernel frames only");
  user->excludes(kern);
  auto* top =
      app.add_option(
             "--top", args.top,
             "Print a table of the N frames with the most self samples instead of a profile")
          ->type_name("N")
          ->check(gp::cli::positive_number());
  top->excludes("--format");
  app.add_flag("--no-truncated-marker", args.no_truncated_marker,
               "Do not put a '[truncated]' frame at the root of stacks whose unwinding was cut "
               "(depth limit, unreadable stack, no unwind rule); every format");
  app.add_flag("--insert-dso-name", args.insert_dso_name,
               "Name symbolized native frames 'function (dso)' as gProfiler's --insert-dso-name "
               "(col, folded, speedscope, --top)");
  gp::cli::choices(app.add_option("--weight", args.weight,
                                  "What a sample weighs: 'period' (the default) weighs each perf "
                                  "sample by its recorded period, as perf report does, counted in "
                                  "samples; 'samples' counts every sample as 1. pprof carries both")
                       ->type_name("WEIGHT")
                       ->capture_default_str(),
                   {"samples", "period"});
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::fold_tool
