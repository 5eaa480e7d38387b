// gp-merge: several archives into one — runtime profiles (gp-runtime) merged into the system
// profile (gp-record, gp-import) as gProfiler does, fp and dwarf recordings combined (--smart),
// and captures of several hosts or sessions gathered into one (--aggregate).
//
//   gp-merge system.gpa runtime.gpa > merged.gpa
//   gp-merge --aggregate host-*.gpa -o fleet.gpa
//
// The merging lives in libcore (gp/merge/merge.h); this file only wires the CLI.
#include "cli.h"
#include "gp/util/huge_heap.h"

int main(int argc, char** argv) {
  gp::util::use_huge_pages_for_heap();
  gp::cli::init_tool("gp-merge");
  gp::merge_tool::MergeArgs args;
  auto app = gp::cli::make_app(
      "gp-merge",
      "Merge gp archives: runtime stacks into system stacks, fp with dwarf, hosts into one.",
      "  gp-merge system.gpa runtime.gpa > merged.gpa\n"
      "  gp-merge --smart fp.gpa dwarf.gpa -o smart.gpa\n"
      "  gp-merge --aggregate host-a.gpa host-b.gpa | gp-fold > fleet.col\n"
      "  gp-merge --perf-less runtime.gpa --seed 7 -o out.gpa\n");
  gp::merge_tool::add_cli(*app, args);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    args.output_given = app->get_option("--output")->count() > 0;
    return gp::merge_tool::run(args);
  });
}
