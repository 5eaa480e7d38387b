#include "cli.h"

namespace gp::upload_tool {

namespace {

void add_studio(CLI::App& app, UploadArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(app.add_option("--server-host", args.server_host,
                                     "Performance Studio base URL (used when --token is given)")
                          ->capture_default_str(),
                      ValueHint::url);
  app.add_option("--token", args.token,
                 "Studio API key (GPROFILER-API-KEY); enables the Studio upload. Never printed");
  app.add_option("--service-name", args.service_name,
                 "Studio service name (GPROFILER-SERVICE-NAME)");
  app.add_flag("--no-verify", args.no_verify, "Do not verify the server's TLS certificate");
  gp::cli::hint_value(
      app.add_option("--ca-file", args.ca_file, "PEM bundle of CA certificates to trust")
          ->check(CLI::ExistingFile),
      ValueHint::file);
  app.add_option(
      "--start-time", args.start_time,
      "Profile start, ISO-8601 (UTC unless it has a zone); default: from the .col header");
  app.add_option("--end-time", args.end_time,
                 "Profile end, ISO-8601; default: from the .col header");
}

void add_pyroscope(CLI::App& app, UploadArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(app.add_option("--pyroscope", args.pyroscope,
                                     "Pyroscope server base URL; enables POST /ingest uploads"),
                      ValueHint::url);
  app.add_option("--pyroscope-app", args.pyroscope_app,
                 "Pyroscope application name with its type suffix (default: <service-name>.cpu, "
                 "or gp.cpu)");
  app.add_option("--pyroscope-label", args.pyroscope_labels,
                 "Extra label KEY=VALUE (repeatable; hostname is added from the .col header)");
  app.add_option("--pyroscope-user", args.pyroscope_user, "Pyroscope basic-auth user");
  app.add_option("--pyroscope-password", args.pyroscope_password, "Pyroscope basic-auth password");
  app.add_option("--pyroscope-token", args.pyroscope_token, "Pyroscope bearer token");
  app.add_option("--pyroscope-tenant", args.pyroscope_tenant, "Pyroscope tenant (X-Scope-OrgID)");
  app.add_option("--pyroscope-chunk-bytes", args.pyroscope_chunk_bytes,
                 "Largest folded body of one /ingest request; bigger profiles are split")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30));
}

}  // namespace

void add_cli(CLI::App& app, UploadArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(app.add_option("inputs", args.inputs,
                                     "Collapsed profiles (.col) to upload; '-' for standard input"),
                      ValueHint::file);
  add_studio(app, args);
  add_pyroscope(app, args);
  app.add_option("--retries", args.retries,
                 "Extra attempts after connection errors, timeouts and 5xx answers (never 4xx)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  app.add_option("--retry-delay", args.retry_delay,
                 "First back-off delay in seconds (doubles each retry)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--timeout", args.timeout, "Timeout of one upload request in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  gp::cli::hint_value(
      app.add_option("--spool", args.spool,
                     "Keep copies of profiles that could not be sent here, and send "
                     "them first next time; also keeps the Studio gpid"),
      ValueHint::directory);
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::upload_tool
