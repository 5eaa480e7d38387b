#pragma once
// --enable-heartbeat-server: gProfiler's dynamic profiling. Instead of profiling at once,
// gp-profile sends a heartbeat to --api-server every --heartbeat-interval seconds and runs
// what the answers command (gp/upload/heartbeat.h): "start" runs sessions with the command's
// combined_config (duration, frequency, pids, continuous, target_hostnames, profilers turned
// off), "stop" ends them; each command is acknowledged with a command completion.

#include <atomic>
#include <functional>

#include "cli.h"
#include "log.h"

namespace gp::profile_tool {

// Runs sessions with these options until the flag is set; returns an exit status.
using RunSessions = std::function<int(const gp::profile::Options&, const std::atomic<bool>&)>;

// Until `stop` (SIGTERM/SIGINT): exit 0.
int heartbeat_loop(const ProfileArgs& args, Log& log, const std::atomic<bool>& stop,
                   const RunSessions& run_sessions);

}  // namespace gp::profile_tool
