// gp-fold: folds profiles (gp archives, gProfiler .col files, folded text) into the text and
// interchange formats people feed to other tools: gProfiler's .col (byte-compatible, for the
// Performance Studio), FlameGraph/bcc folded stacks, pprof and speedscope, or a top-N table.
//
//   perf script | gp-import | gp-fold > out.col
//   gp-fold -f folded --exclude-idle run.gpa | flamegraph.pl > flame.svg
//   gp-fold --top 20 run.gpa
//
// Folding and every format live in libcore (gp/fold/*.h, gp/ingest/input.h); this file only
// wires the CLI.
#include "cli.h"
#include "gp/util/huge_heap.h"

int main(int argc, char** argv) {
  gp::util::use_huge_pages_for_heap();
  gp::cli::init_tool("gp-fold");
  gp::fold_tool::FoldArgs args;
  auto app = gp::cli::make_app(
      "gp-fold",
      "Fold profiles (gp archive, gProfiler .col, folded text) into gProfiler .col, folded stacks, "
      "pprof or speedscope.",
      "  perf script | gp-import | gp-fold > out.col\n"
      "  gp-fold -f folded --exclude-idle --annotate run.gpa | flamegraph.pl > flame.svg\n"
      "  gp-fold run.gpa -o profile.pb.gz && go tool pprof -top profile.pb.gz\n"
      "  gp-fold --comm python --container web a.gpa b.col -o web.col\n"
      "  gp-fold --top 20 run.gpa\n");
  gp::fold_tool::add_cli(*app, args);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    return gp::fold_tool::run(args);
  });
}
