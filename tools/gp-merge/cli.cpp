#include "cli.h"

namespace gp::merge_tool {

void add_cli(CLI::App& app, MergeArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(app.add_option("inputs", args.inputs,
                                     "Archives to merge; '-' for standard input (the default)"),
                      ValueHint::archive);
  gp::cli::hint_value(
      app.add_option("-o,--output", args.output, "Archive to write; '-' for standard output")
          ->capture_default_str(),
      ValueHint::archive);
  app.add_flag("--aggregate", args.aggregate,
               "Merge all sessions into one (tables re-interned, pids that collide across hosts "
               "renumbered); default: each session stays a session");
  app.add_flag("--perf-less", args.perf_less,
               "Keep runtime sessions unscaled instead of merging them into the system session");
  app.add_flag("--smart", args.smart,
               "Merge an fp and a dwarf recording: per process, the deeper stacks win "
               "(gProfiler's smart perf mode)");
  app.add_option("--seed", args.seed,
                 "Seed of the probabilistic rounding used when scaling counts (output is "
                 "reproducible for a given seed)");
  app.add_flag("--no-compress", args.no_compress, "Write the archive without LZ4 compression");
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::merge_tool
