#include "cli.h"

namespace gp::flame_tool {

void add_cli(CLI::App& app, FlameArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(
      app.add_option("input", args.input,
                     "Profile: gp archive, gProfiler .col or folded text; '-' for standard input")
          ->capture_default_str(),
      ValueHint::file);
  gp::cli::hint_value(
      app.add_option("-o,--output", args.output, "HTML page to write; '-' for standard output")
          ->capture_default_str(),
      ValueHint::file);
  app.add_option("--title", args.title, "Title of the page")->capture_default_str();
  app.add_option("--subtitle", args.subtitle, "Line shown under the title");
  gp::cli::hint_value(
      app.add_option("--diff", args.diff_base,
                     "Differential flamegraph against the BASE profile: the shape of the "
                     "input, red where a frame's share grew, blue where it shrank")
          ->option_text("BASE"),
      ValueHint::file);
  app.add_flag("--inverted", args.inverted,
               "Icicle layout: the root on top, callees below (gProfiler's layout)");
  app.add_flag(
      "--deterministic", args.deterministic,
      "Colours from a hash of each frame name only and no generation time, so equal inputs give "
      "byte-identical pages");
  app.add_option(
         "--min-width", args.min_width,
         "Leave out frames narrower than PX pixels on a 1200-pixel-wide page (smaller files); "
         "default 0 keeps all")
      ->option_text("PX")
      ->check(gp::cli::non_negative_number());
  app.add_flag("--no-truncated-marker", args.no_truncated_marker,
               "Do not put a '[truncated]' frame at the root of stacks whose unwinding was cut "
               "(depth limit, unreadable stack, no unwind rule)");
  gp::cli::choices(app.add_option("--weight", args.weight,
                                  "What a sample weighs: 'period' (the default) weighs each perf "
                                  "sample by its recorded period, as perf report does; 'samples' "
                                  "counts every sample as 1")
                       ->type_name("WEIGHT")
                       ->capture_default_str(),
                   {"samples", "period"});
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::flame_tool
