#pragma once
// One profiling session of gp-profile: record (system + runtimes, side by side), merge,
// symbolize, fold, flamegraph, publish into --output-dir, upload. A stage that fails is
// logged and the session goes on with what exists; only a session without any .col fails.

#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "continuous_record.h"
#include "gp/profile/agent.h"
#include "gp/profile/plan.h"
#include "gp/profile/top_cgroups.h"
#include "gp/record/command.h"
#include "log.h"

namespace gp::profile_tool {

// Paths of the tools a session runs (empty: not needed, or gp-runtime not installed).
struct Tools {
  std::string record, runtime, merge, symbolize, fold, flame, upload;
};

struct SessionContext {
  const gp::profile::Options& options;
  const Tools& tools;
  std::filesystem::path work_dir;  // private temporary directory of this gp-profile
  const std::atomic<bool>& stop;
  Log& log;
  // The agent's metadata merged into every .col header, and its metrics (null: not collected).
  const json::Value* agent = nullptr;
  gp::profile::MetricsMonitor* metrics = nullptr;
  // Messages said once per run (a --pids process that is no runtime's, every session the same).
  std::set<std::string>* said_once = nullptr;
  // With --continuous: the one gp-record of the run (null: a gp-record per session).
  ContinuousRecord* system_record = nullptr;
  MemoryGuard memory_guard = {};  // of system_record
  // With --perf-use-cgroups: picks each session's cgroups for gp-record.
  gp::profile::CgroupRanking* cgroups = nullptr;
  // `gp-profile -- COMMAND`: the held command the one session records and lets go (null: none).
  gp::record::RecordedCommand* command = nullptr;
  // --enable-hw-metrics-collection: the directory PerfSpect writes its summary into ("": none).
  std::string hw_metrics_dir = {};
};

// cannot_run: the command could not be started (said in one line; gp-profile exits 127).
enum class SessionOutcome { ok, failed, stopped, cannot_run };

SessionOutcome run_session(const SessionContext& context, int number);

}  // namespace gp::profile_tool
