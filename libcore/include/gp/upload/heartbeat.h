#pragma once
// gProfiler's heartbeat / dynamic profiling protocol (gprofiler.md §8.3; its
// dynamic_profiling_management/heartbeat.py, served by the Performance Studio's
// metrics_routes.py): the agent POSTs a heartbeat to <api-server>/api/metrics/heartbeat every
// --heartbeat-interval seconds; the answer may carry a profiling command ("start" with a
// combined_config, or "stop") under a command_id, which the agent acknowledges with POST
// <api-server>/api/metrics/command_completion. Both are plain JSON (json.dumps' default
// form) with "Authorization: Bearer <token>"; 30 s timeout.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gp/upload/http.h"
#include "gp/util/json.h"

namespace gp::upload {

// The command ids the agent has seen and run (the heartbeat sends them back: the server's
// idempotency), each list kept to its newest 1000, in arrival order.
struct HeartbeatState {
  std::optional<std::string> last_command_id;
  std::vector<std::string> received_command_ids;
  std::vector<std::string> executed_command_ids;

  bool received(const std::string& id) const;
  void mark_received(const std::string& id);
  void mark_executed(const std::string& id);
};

struct HeartbeatIdentity {
  std::string ip_address;  // local_ip_address()
  std::string hostname;
  std::string service_name;
};

// The heartbeat's JSON: ip_address, hostname, service_name, last_command_id, status "active",
// timestamp (local time, ISO with microseconds, as datetime.now().isoformat()),
// received_command_ids, executed_command_ids.
std::string heartbeat_body(const HeartbeatState& state, const HeartbeatIdentity& id,
                           const std::string& timestamp);
// datetime.now().isoformat() of the current time.
std::string local_isoformat_now();

// POST <api_server without trailing '/'>/<path> with the JSON body, bearer token, 30 s.
HttpRequest heartbeat_request(std::string_view api_server, const std::string& token,
                              std::string body, bool verify_tls);
HttpRequest completion_request(std::string_view api_server, const std::string& token,
                               std::string body, bool verify_tls);

// A command the server gave.
struct ProfilingCommand {
  std::string command_id;
  std::string command_type;       // "start", "stop" or what the server sent
  json::Value profiling_command;  // the whole object (its combined_config)
  bool continuous = false;        // combined_config.continuous
};

// The command of a heartbeat answer: only for HTTP 200 with JSON {success: true,
// profiling_command: {...}, command_id}; nullopt otherwise (no command pending, or not JSON).
std::optional<ProfilingCommand> command_from_response(const HttpResponse& response);

// The completion's JSON: command_id, hostname, status ("completed" or "failed"),
// execution_time, error_message (null when empty), results_path (null).
std::string completion_body(const std::string& command_id, const std::string& hostname,
                            const std::string& status, int64_t execution_time,
                            const std::string& error_message = "");

// What a start command asks of a profiling run (gProfiler's create_profiler_args, for what
// gp-profile has): each member is set only when the config sets it.
struct CommandSettings {
  bool for_this_host = true;  // false: target_hostnames does not name this host (skip)
  std::optional<unsigned> duration_s;
  std::optional<unsigned> frequency;
  std::optional<std::string> profiling_mode;
  std::vector<int> pids;  // empty: all
  bool continuous = false;
  // Profilers profiler_configs turns off: "perf", "java", "python", "php", "ruby", "dotnet",
  // "nodejs".
  std::set<std::string> disabled;
};
// An error names a member of combined_config that has the wrong type.
Result<CommandSettings> command_settings(const json::Value& profiling_command,
                                         const std::string& hostname);

// The address of the interface that routes outside (a UDP socket "connected" to 8.8.8.8:80,
// nothing sent), or 127.0.0.1, as gProfiler's _get_local_ip.
std::string local_ip_address();

}  // namespace gp::upload
