#include "cli.h"

#include <unistd.h>

#include "gp/runtime/registry.h"

namespace gp::profile_tool {

namespace {

using gp::cli::ValueHint;
using gp::profile::Options;

void add_sampling(CLI::App& app, ProfileArgs& args) {
  Options& o = args.options;
  app.add_option("-d,--profiling-duration", o.duration_s, "Seconds of one profiling session")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(1u, 86400u));
  app.add_option("-f,-F,--profiling-frequency", o.frequency,
                 "Samples per second per CPU (and per runtime profiler)")
      ->type_name("HZ")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--pids", o.pids,
                 "Only these processes (comma-separated or repeated; default: all)")
      ->type_name("PID")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  gp::cli::choices(app.add_option("--perf-mode", args.perf_mode,
                                  "System profiler: fp (frame pointers), smart (= fp: gp-record "
                                  "has no DWARF unwinder), disabled/none (runtime stacks only)")
                       ->type_name("MODE")
                       ->capture_default_str(),
                   {"fp", "smart", "dwarf", "disabled", "none"});
  app.add_flag("--no-perf", args.no_perf, "Same as --perf-mode disabled");
}

// --<runtime>-mode and --no-<runtime> for every runtime gp-runtime knows (its registry holds
// gProfiler's spellings and defaults, so both tools accept the same values).
void add_runtimes(CLI::App& app, ProfileArgs& args) {
  const auto runtimes = gp::runtime::all_runtimes();
  args.runtimes.clear();
  args.runtimes.reserve(runtimes.size());  // options keep pointers into this vector
  for (auto r : runtimes) {
    const auto& modes = gp::runtime::runtime_modes(r);
    args.runtimes.push_back({std::string(modes.option), std::string(modes.default_mode), false});
  }
  for (size_t i = 0; i < runtimes.size(); ++i) {
    auto& rt = args.runtimes[i];
    std::string name(gp::runtime::runtime_name(runtimes[i]));
    gp::cli::choices(app.add_option("--" + rt.option + "-mode", rt.mode,
                                    "Profiler for " + name + " processes, run by gp-runtime")
                         ->type_name("MODE")
                         ->capture_default_str(),
                     gp::runtime::accepted_mode_values(runtimes[i]));
    app.add_flag("--no-" + rt.option, rt.disabled, "Same as --" + rt.option + "-mode disabled");
  }
  app.add_flag("--disable-application-identifiers", args.disable_application_identifiers,
               "No 'appid: ...' frames (gp-runtime's application identifiers)");
  app.add_flag(
      "--disable-application-metadata", args.disable_application_metadata,
      "No application-metadata index frame in the .col (gp-fold --no-app-metadata, gp-runtime)");
  app.add_flag("--no-truncated-marker", args.no_truncated_marker,
               "No '[truncated]' frame at the root of stacks whose unwinding was cut, in the .col "
               "and the flamegraph (gp-fold --no-truncated-marker)");
  gp::cli::choices(app.add_option("--profile-api-version", args.options.profile_api_version,
                                  "v1 writes .col lines without the index and container frames")
                       ->type_name("VERSION")
                       ->capture_default_str(),
                   {"v1", "v2"});
}

void add_outputs(CLI::App& app, ProfileArgs& args) {
  Options& o = args.options;
  gp::cli::hint_value(app.add_option("-o,--output-dir", o.output_dir,
                                     "Write profile_<time>.col (and .html) here, with the links "
                                     "last_profile.col and last_flamegraph.html")
                          ->type_name("DIR"),
                      ValueHint::directory);
  app.add_flag("--rotating-output", o.rotating_output,
               "Keep only the newest profile in --output-dir");
  app.add_flag("--no-flamegraph", args.no_flamegraph, "Do not write the .html flamegraph");
  app.add_flag("-c,--continuous", o.continuous,
               "Profile session after session until SIGTERM/SIGINT");
  app.add_flag("-u,--upload-results", o.upload,
               "Upload each profile to the Performance Studio (needs --token, --service-name)");
  app.add_option("--token", o.token, "Studio API key (never printed)");
  app.add_option("--service-name", o.service_name, "Studio service name");
  gp::cli::hint_value(app.add_option("--server-host", o.server_host, "Performance Studio base URL")
                          ->type_name("URL")
                          ->capture_default_str(),
                      ValueHint::url);
  app.add_flag("--no-verify", o.no_verify, "Do not verify the server's TLS certificate");
  app.add_option("--server-upload-timeout", o.upload_timeout_s,
                 "Timeout of one upload request in seconds")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
}

void add_process(CLI::App& app, ProfileArgs& args) {
  app.add_flag("--rootless", args.options.rootless,
               "Run without root (needs --pids; gp-record then samples with perf events)");
  gp::cli::hint_value(app.add_option("--log-file", args.log_file,
                                     "Also append the log to this file (rotated at 5 MiB)")
                          ->type_name("FILE"),
                      ValueHint::file);
  gp::cli::hint_value(
      app.add_option("--pid-file", args.pid_file, "Write the process id here while running")
          ->type_name("FILE"),
      ValueHint::file);
}

void add_upload_file(CLI::App& app, ProfileArgs& args) {
  auto* sub = app.add_subcommand(
      "upload-file", "Upload an existing .col file to the Performance Studio (gp-upload)");
  sub->fallthrough();  // --token & co. may come after the subcommand, as gProfiler allows
  gp::cli::hint_value(sub->add_option("--file-path", args.file_path, "The .col file to upload")
                          ->required()
                          ->check(CLI::ExistingFile),
                      ValueHint::file);
}

// Turns the typed values into Options; throws CLI::ValidationError (exit 2) on the rules of
// gprofiler.md §9.3.
void finish(CLI::App& app, ProfileArgs& args) {
  Options& o = args.options;
  args.upload_file = app.got_subcommand("upload-file");
  o.perf_mode = args.no_perf ? gp::profile::PerfMode::disabled
                             : gp::profile::parse_perf_mode(args.perf_mode).value();
  o.runtimes.clear();
  const auto runtimes = gp::runtime::all_runtimes();
  for (size_t i = 0; i < runtimes.size(); ++i) {
    const auto& rt = args.runtimes[i];
    std::string mode = "disabled";
    if (!rt.disabled) {
      auto canonical = gp::runtime::normalize_mode(runtimes[i], rt.mode);
      if (!canonical)
        throw CLI::ValidationError("--" + rt.option + "-mode", canonical.error().message);
      mode = *canonical;
    }
    o.runtimes.push_back({rt.option, mode});
  }
  o.flamegraph = !args.no_flamegraph;
  o.application_identifiers = !args.disable_application_identifiers;
  o.application_metadata = !args.disable_application_metadata;
  o.truncated_marker = !args.no_truncated_marker;
  if (args.upload_file) {
    o.upload = true;  // upload-file implies -u and needs no output dir (gprofiler.md §8.5)
    if (o.token.empty())
      throw CLI::ValidationError("Must provide --token when --upload-results is passed");
    if (o.service_name.empty())
      throw CLI::ValidationError("Must provide --service-name when --upload-results is passed");
    return;
  }
  if (auto problem = gp::profile::validate(o, ::geteuid() == 0))
    throw CLI::ValidationError(*problem);
}

}  // namespace

void add_cli(CLI::App& app, ProfileArgs& args) {
  add_sampling(app, args);
  add_runtimes(app, args);
  add_outputs(app, args);
  add_process(app, args);
  add_upload_file(app, args);
  gp::cli::add_common_options(app, args.common);
  app.final_callback([&app, &args] {
    auto* gen = app.get_option_no_throw("--generate-completion");
    if (gen != nullptr && gen->count() > 0) return;  // only prints completions
    finish(app, args);
  });
}

}  // namespace gp::profile_tool
