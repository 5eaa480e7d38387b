#include "cli.h"

namespace gp::import_tool {

void add_cli(CLI::App& app, ImportArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(
      app.add_option("input", args.input,
                     "perf script text, or a perf.data file (also 'perf record -o -' output); "
                     "'-' for standard input")
          ->capture_default_str(),
      ValueHint::file);
  gp::cli::hint_value(
      app.add_option("-o,--output", args.output, "Archive to write; '-' for standard output")
          ->capture_default_str(),
      ValueHint::archive);
  app.add_option("--event", args.event,
                 "Import only samples of this event (as perf prints it; 'cpu-clock' also "
                 "matches 'cpu-clock:ppp'). Default: the first event seen");
  gp::cli::hint_value(
      app.add_option("--kallsyms", args.kallsyms,
                     "Kernel symbols (a copy of /proc/kallsyms of the recording host) for a "
                     "perf.data's kernel frames. Default: perf's build-id cache "
                     "(~/.debug/[kernel.kallsyms]/BUILD-ID/kallsyms), else /proc/kallsyms when "
                     "this host runs the recorded kernel"),
      ValueHint::file);
  app.add_flag("--via-perf-script", args.via_perf_script,
               "Decode a perf.data file with 'perf script' (perf's names, no addresses) instead "
               "of reading it directly");
  app.add_flag("--no-compress", args.no_compress, "Write the archive without LZ4 compression");
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::import_tool
