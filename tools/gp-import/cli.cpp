#include "cli.h"

namespace gp::import_tool {

void add_cli(CLI::App& app, ImportArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(
      app.add_option("input", args.input,
                     "perf script text, or a perf.data file (gp-import runs 'perf script' on "
                     "it); '-' for standard input")
          ->capture_default_str(),
      ValueHint::file);
  gp::cli::hint_value(
      app.add_option("-o,--output", args.output, "Archive to write; '-' for standard output")
          ->capture_default_str(),
      ValueHint::archive);
  app.add_option("--event", args.event,
                 "Import only samples of this event (as perf prints it; 'cpu-clock' also "
                 "matches 'cpu-clock:ppp'). Default: the first event seen");
  app.add_flag("--no-compress", args.no_compress, "Write the archive without LZ4 compression");
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::import_tool
