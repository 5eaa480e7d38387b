#include "cli.h"

namespace gp::symbolize_tool {

void add_cli(CLI::App& app, SymbolizeArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(app.add_option("input", args.input,
                                     "Archive to symbolize; '-' for standard input (the default)"),
                      ValueHint::archive);
  gp::cli::hint_value(app.add_option("-o,--output", args.output,
                                     "Archive to write; '-' or absent for standard output"),
                      ValueHint::archive);
  gp::cli::hint_value(
      app.add_option("--debug-dir", args.debug_dirs,
                     "Symbol store laid out as .build-id/xx/rest[.debug] (perf's buildid "
                     "cache works too); searched first, repeatable")
          ->type_name("DIR")
          ->allow_extra_args(false),  // one DIR per --debug-dir: the input may follow
      ValueHint::directory);
  gp::cli::hint_value(app.add_option("--sysroot", args.sysroot,
                                     "Copy of the recorded host's file system: recorded paths and "
                                     "usr/lib/debug are looked up under it")
                          ->type_name("DIR"),
                      ValueHint::directory);
  app.add_flag(
      "--stores-only", args.stores_only,
      "Use only --debug-dir, the sidecar store (ARCHIVE.symbols), --sysroot and debuginfod: not "
      "the recorded paths nor /usr/lib/debug of this machine");
  app.add_flag(
      "--debuginfod", args.debuginfod,
      "Also ask the debuginfod servers of DEBUGINFOD_URLS (cached in DEBUGINFOD_CACHE_PATH)");
  app.add_flag("--lines", args.lines,
               "Record source file and line numbers, not only function names");
  auto* mode =
      gp::cli::choices(app.add_option("--demangle", args.demangle,
                                      "C++/Rust names: none, simplified (no parameters, templates "
                                      "or return type), templates (no parameters), full")
                           ->type_name("STYLE")
                           ->capture_default_str(),
                       {"none", "simplified", "templates", "full"});
  app.add_flag("--no-demangle", args.no_demangle, "Same as --demangle none")->excludes(mode);
  app.add_flag("--no-inline", args.no_inline,
               "Do not expand inlined functions into frames of their own");
  app.add_option("-j,--jobs", args.jobs,
                 "Worker threads over binaries (default: one per CPU, at most 8)")
      ->type_name("N")
      ->check(gp::cli::positive_number());
  app.add_flag("--strict", args.strict, "Exit with status 3 when any frame stays unresolved");
  gp::cli::hint_value(
      app.add_option("--export-symbols", args.export_dir,
                     "Copy every binary and debug file the archive needs into this "
                     ".build-id store (for --debug-dir elsewhere); writes no archive "
                     "unless -o is given")
          ->type_name("DIR"),
      ValueHint::directory);
  app.add_flag("--no-compress", args.no_compress, "Write the archive without LZ4 compression");
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::symbolize_tool
