#pragma once
// gp-upload's arguments and their CLI11 definition (one definition for help, man checks and
// completions).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "gp/cli/tool.h"

namespace gp::upload_tool {

struct UploadArgs {
  std::vector<std::string> inputs{"-"};  // .col files; "-" = stdin
  // Performance Studio
  std::string server_host = "https://profiler.granulate.io";
  std::string token;  // also GPROFILER_TOKEN, or the first line of --token-file
  std::string token_file;
  std::string service_name;
  bool health_check_only = false;  // --health-check: check the Studio and exit
  bool no_health_check = false;
  bool no_verify = false;
  bool curlify_requests = false;
  std::string ca_file;
  std::string start_time, end_time;
  // Pyroscope
  std::string pyroscope;
  std::string pyroscope_app;
  std::vector<std::string> pyroscope_labels;  // k=v
  std::string pyroscope_user, pyroscope_password, pyroscope_token, pyroscope_tenant;
  size_t pyroscope_chunk_bytes = 1024 * 1024;
  // Delivery
  int retries = 3;
  double retry_delay = 1;
  double timeout = 120;
  std::string spool;
  uint64_t spool_max_bytes = 0;  // 0: unbounded
  std::string gpid_file;         // default: <spool>/gpid
  gp::cli::CommonArgs common;
};

void add_cli(CLI::App& app, UploadArgs& args);

// Uploads as the arguments say; returns the exit status.
int run(const UploadArgs& args);

}  // namespace gp::upload_tool
