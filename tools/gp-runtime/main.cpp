// gp-runtime: profiles the language runtimes on the host — Java, Python, Ruby, PHP, .NET, Node —
// with each runtime's own profiler (async-profiler or JFR, py-spy or gp's CPython sampler, rbspy
// or gp's CRuby sampler, phpspy, dotnet-trace, Node perf maps or inspector) and writes their
// stacks as a runtime archive that gp-merge folds into a gp-record system archive, as gProfiler
// merges its profilers.
//
//   gp-record -d 60 -o system.gpa & gp-runtime -d 60 -o runtime.gpa; wait
//   gp-merge system.gpa runtime.gpa | gp-fold > profile.col
//
// Discovery, adapters and the session driver live in libcore (gp/runtime/); this file wires the
// CLI.
#include "cli.h"

int main(int argc, char** argv) {
  gp::cli::init_tool("gp-runtime");
  gp::runtime_tool::RuntimeArgs args;
  auto app = gp::cli::make_app(
      "gp-runtime",
      "Profile Java, Python, Ruby, PHP, .NET and Node processes with their runtimes' profilers "
      "into "
      "a gp archive.",
      "  gp-runtime -d 30 -o runtime.gpa            # every runtime process, 30 s\n"
      "  gp-runtime -d 10 -p 1234 | gp-fold         # one process, Java/Python frames\n"
      "  gp-runtime -d 60 --java-mode jfr --no-python -o java.gpa\n"
      "  gp-runtime -d 30 --ruby-mode gp -o ruby.gpa  # gp's own Ruby sampler, no rbspy\n"
      "  gp-runtime -d 30 --php-mode gp --php-proc-filter php -o php.gpa\n"
      "  gp-record -d 60 -o sys.gpa & gp-runtime -d 60 -o rt.gpa; wait\n"
      "  gp-merge sys.gpa rt.gpa | gp-fold > merged.col\n");
  gp::runtime_tool::add_cli(*app, args);
  std::vector<std::string> arguments(argv, argv + argc);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    args.output_given = app->get_option("--output")->count() > 0;
    return gp::runtime_tool::run(args, arguments);
  });
}
