// gp-symbolize: turns the addresses of a gp archive into function names, on any machine —
// the capture host, a laptop, a CI box with a symbol store — and writes the archive again.
// Binaries and debug info are found by build-id (--debug-dir stores, --sysroot, the recorded
// path, /usr/lib/debug, .gnu_debuglink, debuginfod), kernel and JIT frames from what the
// archive carries. With --export-symbols it copies what the archive needs into a store instead.
//
//   gp-record -d 10 | gp-symbolize | gp-fold > out.col
//   gp-symbolize --debug-dir syms --lines run.gpa -o named.gpa
//   gp-symbolize --export-symbols syms run.gpa     # on the capture host, then carry syms/
//
// Resolution lives in libcore (gp/symbolize/*.h); this directory only wires the CLI.
#include "cli.h"
#include "gp/util/huge_heap.h"

int main(int argc, char** argv) {
  gp::util::use_huge_pages_for_heap();
  gp::cli::init_tool("gp-symbolize");
  gp::symbolize_tool::SymbolizeArgs args;
  auto app = gp::cli::make_app(
      "gp-symbolize",
      "Resolve the addresses of a gp archive to function names (elfutils), off-host, and write the "
      "archive again.",
      "  gp-record -d 10 | gp-symbolize | gp-fold > out.col\n"
      "  gp-symbolize --debug-dir ./syms --lines run.gpa -o named.gpa\n"
      "  gp-symbolize --export-symbols ./syms run.gpa\n"
      "  DEBUGINFOD_URLS=https://debuginfod.debian.net gp-symbolize --debuginfod run.gpa -o "
      "named.gpa\n"
      "  gp-symbolize --strict --demangle simplified < run.gpa > named.gpa\n");
  gp::symbolize_tool::add_cli(*app, args);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    return gp::symbolize_tool::run(args);
  });
}
