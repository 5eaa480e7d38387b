// gp-upload: collapsed profiles (.col) to a gProfiler Performance Studio (the agent API:
// health check, gzip JSON POST /api/v2/profiles, gpid round trip) and/or a Pyroscope server
// (POST /ingest?format=folded), with retries, back-off and a spool for what could not be sent.
//
//   gp-upload --token T --service-name web --server-host https://studio.example profile.col
//   gp-upload --pyroscope http://pyroscope:4040 --pyroscope-app web.cpp.cpu profile.col
//
// The request builders and the transport live in libcore (gp/upload/*.h); this tool wires
// the CLI and the per-file loop.
#include "cli.h"

int main(int argc, char** argv) {
  gp::cli::init_tool("gp-upload");
  gp::upload_tool::UploadArgs args;
  auto app = gp::cli::make_app(
      "gp-upload", "Upload collapsed profiles to a gProfiler Performance Studio and/or Pyroscope.",
      "  gp-upload --token \"$TOKEN\" --service-name web --server-host https://studio.local p.col\n"
      "  gp-fold run.gpa | gp-upload --token \"$TOKEN\" --service-name web\n"
      "  gp-upload --pyroscope http://localhost:4040 --pyroscope-app web.cpu p.col\n"
      "  gp-upload --spool /var/spool/gp --retries 5 --token \"$TOKEN\" --service-name web "
      "*.col\n");
  gp::upload_tool::add_cli(*app, args);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    return gp::upload_tool::run(args);
  });
}
