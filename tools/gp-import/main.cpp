// gp-import: turns Linux perf's `perf script` text into a gp archive, so recordings made with
// `perf record` go through the rest of gp (gp-fold, gp-flame, gp-merge...).
//
//   perf script | gp-import | gp-fold > out.col
//   gp-import perf.data -o run.gpa          (runs 'perf script' itself)
//
// The parsing lives in libcore (gp/import/perf_script.h); this file only wires the CLI.
#include "cli.h"
#include "gp/util/huge_heap.h"

int main(int argc, char** argv) {
  gp::util::use_huge_pages_for_heap();
  gp::cli::init_tool("gp-import");
  gp::import_tool::ImportArgs args;
  auto app = gp::cli::make_app(
      "gp-import", "Convert 'perf script' output (or a perf.data file) into a gp archive.",
      "  perf record -F 99 -a -g -- sleep 10\n"
      "  perf script | gp-import | gp-fold > out.col\n"
      "  gp-import perf.data -o run.gpa\n"
      "  perf script -F +pid | gp-import --event cycles -o run.gpa\n");
  gp::import_tool::add_cli(*app, args);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    args.output_given = app->get_option("--output")->count() > 0;
    return gp::import_tool::run(args);
  });
}
