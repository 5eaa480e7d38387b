// gp-profile: the gProfiler-compatible driver. Each profiling session runs gp-record (the
// system) and gp-runtime (Java, Python, Ruby, ... stacks) side by side for --profiling-duration
// seconds, then gp-merge, gp-symbolize and gp-fold make a gProfiler .col file, gp-flame its
// HTML flamegraph; the files go to --output-dir and/or gp-upload sends them to a Performance
// Studio. With --continuous it loops until SIGTERM/SIGINT. Option names and defaults are
// gProfiler's (11 Hz, 60 s sessions).
//
//   gp-profile -d 60 -o /var/lib/gp-profile
//   gp-profile -cu --token "$TOKEN" --service-name web
//   gp-profile upload-file --file-path old.col --token "$TOKEN" --service-name web
//
// The tools are the interface: gp-profile finds them next to its own binary, then on PATH.
// Option mapping, child processes and output files live in libcore (gp/profile/*.h).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "gp/cli/env_config.h"

int main(int argc, char** argv) {
  gp::cli::init_tool("gp-profile");
  gp::profile_tool::ProfileArgs args;
  auto app = gp::cli::make_app(
      "gp-profile",
      "Profile this host continuously, gProfiler-style: record, merge runtime stacks, fold, "
      "render, upload.",
      "  gp-profile -d 60 -o out/                       # one 60 s profile: "
      "out/profile_<time>.col/.html\n"
      "  gp-profile -c -o /var/lib/gp --rotating-output # forever, keep only the newest\n"
      "  gp-profile -cu --token \"$TOKEN\" --service-name web --server-host https://studio.local\n"
      "  gp-profile -d 30 --pids 1234 --python-mode pyspy --no-java -o out/\n"
      "  gp-profile -f 99 -o out/ -- ./myprog --its-args  # one command, until it exits\n"
      "  gp-profile upload-file --file-path out/last_profile.col --token \"$TOKEN\" "
      "--service-name web\n"
      "  GPROFILER_TOKEN=... GPROFILER_SERVICE_NAME=web gp-profile -cu --server-host "
      "https://studio.local\n"
      "  gp-profile --config /etc/gprofiler/config.ini  # lines 'service-name = web'\n");
  gp::profile_tool::add_cli(*app, args);
  // gProfiler's other sources: GPROFILER_<OPTION> variables and config files (configargparse:
  // command line > environment > config file > default).
  std::vector<std::string> typed(argv + 1, argv + argc);
  bool help = std::any_of(typed.begin(), typed.end(),
                          [](const std::string& a) { return a == "-h" || a == "--help"; });
  std::vector<std::string> expanded = typed;
  if (!help) {
    auto all = gp::cli::expand_env_and_config(
        *app, typed,
        {gp::profile_tool::kEnvPrefix, "--config", {gp::profile_tool::kDefaultConfigFile}, {}});
    if (!all) {
      gp::cli::error(all.error().message);
      std::fputs("Try 'gp-profile --help' for more information.\n", stderr);
      return gp::cli::kExitUsage;
    }
    expanded = std::move(*all);
  }
  std::vector<char*> full{argv[0]};
  for (auto& a : expanded) full.push_back(a.data());
  full.push_back(nullptr);
  return gp::cli::run(*app, static_cast<int>(full.size()) - 1, full.data(), [&] {
    gp::cli::set_verbosity(args.common);
    return gp::profile_tool::run(args);
  });
}
