#include "cli.h"

namespace gp::upload_tool {

namespace {

void add_studio(CLI::App& app, UploadArgs& args) {
  using gp::cli::ValueHint;
  gp::cli::hint_value(app.add_option("--server-host", args.server_host,
                                     "Performance Studio base URL (used when --token is given)")
                          ->capture_default_str(),
                      ValueHint::url);
  auto* token = app.add_option("--token", args.token,
                               "Studio API key (GPROFILER-API-KEY); enables the Studio upload. "
                               "Never printed. Default: $GPROFILER_TOKEN");
  gp::cli::hint_value(
      app.add_option("--token-file", args.token_file,
                     "Read the API key from the first line of this file (keeps it out of ps)")
          ->check(CLI::ExistingFile)
          ->excludes(token),
      ValueHint::file);
  app.add_option("--service-name", args.service_name,
                 "Studio service name (GPROFILER-SERVICE-NAME)");
  app.add_flag("--no-verify", args.no_verify, "Do not verify the server's TLS certificate");
  app.add_flag("--curlify-requests", args.curlify_requests,
               "Print each request as a curl command line (body un-gzipped, token as ***)");
  gp::cli::hint_value(
      app.add_option("--ca-file", args.ca_file, "PEM bundle of CA certificates to trust")
          ->check(CLI::ExistingFile),
      ValueHint::file);
  app.add_option(
      "--start-time", args.start_time,
      "Profile start, ISO-8601 (UTC unless it has a zone); default: from the .col header");
  app.add_option("--end-time", args.end_time,
                 "Profile end, ISO-8601; default: from the .col header");
  app.add_flag("--health-check", args.health_check_only,
               "Only check that the Studio answers and accepts the key (one attempt), then exit");
  app.add_flag("--no-health-check", args.no_health_check,
               "Upload without the health check first (a caller that already made it)");
  gp::cli::hint_value(app.add_option("--gpid-file", args.gpid_file,
                                     "Keep the Studio's gpid for this agent here (default: in "
                                     "--spool)"),
                      ValueHint::file);
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
                 "Extra attempts after connection errors, timeouts, 5xx and 429 answers (never "
                 "other 4xx); a 429 waits for its Retry-After")
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
                     "them first next time (oldest first); also keeps the Studio gpid"),
      ValueHint::directory);
  app.add_option("--spool-max-bytes", args.spool_max_bytes,
                 "Bound of the spool: the oldest profiles are dropped (with a warning) beyond "
                 "it; 0: no bound")
      ->capture_default_str();
  gp::cli::add_common_options(app, args.common);
}

}  // namespace gp::upload_tool
