// gp-flame: renders a profile as one self-contained, interactive HTML flamegraph (canvas,
// click to zoom, search, tooltips, frame colours by kind, differential mode). The page needs
// no network, and stays fluid with 100k+ unique stacks.
//
//   gp-flame out.col > flame.html
//   perf script | gp-import | gp-flame -o flame.html
//   gp-flame --diff before.col after.col -o diff.html
//
// Folding and rendering live in libcore (gp/fold/stacks.h, gp/flame/*.h); this file only
// wires the CLI.
#include "cli.h"
#include "gp/util/huge_heap.h"

int main(int argc, char** argv) {
  gp::util::use_huge_pages_for_heap();
  gp::cli::init_tool("gp-flame");
  gp::flame_tool::FlameArgs args;
  auto app = gp::cli::make_app(
      "gp-flame",
      "Render a profile (archive, .col or folded text) as a self-contained HTML flamegraph.",
      "  gp-flame out.col > flame.html\n"
      "  perf script | gp-import | gp-flame -o flame.html --title 'web-1, 10 s'\n"
      "  gp-flame --inverted --deterministic run.gpa -o icicle.html\n"
      "  gp-flame --diff before.col after.col -o diff.html\n");
  gp::flame_tool::add_cli(*app, args);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    return gp::flame_tool::run(args);
  });
}
