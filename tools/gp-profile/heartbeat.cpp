// gProfiler's DynamicGProfilerManager with one profiling slot: a continuous command replaces
// the running one; an ad-hoc (not continuous) command pauses a continuous one, which starts
// again when the ad-hoc run ends; an ad-hoc command that comes while another ad-hoc run is
// going waits for it.
#include "heartbeat.h"

#include <unistd.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <thread>

#include "gp/upload/heartbeat.h"

namespace gp::profile_tool {
namespace {

using gp::upload::ProfilingCommand;

struct Job {
  ProfilingCommand command;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::thread thread;
};

class Manager {
 public:
  Manager(const ProfileArgs& args, Log& log, const std::atomic<bool>& stop, const RunSessions& run)
      : args_(args), log_(log), stop_(stop), run_(run) {
    char host[256] = {0};
    identity_.hostname = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
    identity_.ip_address = gp::upload::local_ip_address();
    identity_.service_name = args.options.service_name;
  }
  ~Manager() { stop_job(); }

  void beat() {
    std::string body =
        gp::upload::heartbeat_body(state_, identity_, gp::upload::local_isoformat_now());
    auto response = gp::upload::perform(gp::upload::heartbeat_request(
        args_.api_server, args_.options.token, std::move(body), !args_.options.no_verify));
    std::optional<ProfilingCommand> command;
    if (response.status == 200) {
      command = gp::upload::command_from_response(response);
      if (command) {
        log_.info(1, "Received profiling command from server: " + command->command_id);
      } else {
        log_.info(2, "Heartbeat successful, no pending commands");
      }
    } else if (response.status != 0) {
      log_.warning("Heartbeat failed with status " + std::to_string(response.status) + ": " +
                   response.body);
    } else {
      log_.error("Failed to send heartbeat: " + response.error);
    }
    reap();
    if (command) {
      if (state_.received(command->command_id)) {
        log_.info(1, "Command ID " + command->command_id + " already received, skipping...");
      } else {
        state_.mark_received(command->command_id);
        state_.last_command_id = command->command_id;
        process(*command);
      }
    }
    if (!job_ && !waiting_.empty()) {
      ProfilingCommand next = waiting_.front();
      waiting_.pop_front();
      start(next, false);
    }
  }

  void stop_job() {
    if (!job_) return;
    job_->stop.store(true);
    if (job_->thread.joinable()) job_->thread.join();
    job_.reset();
  }

 private:
  // A run that ended by itself: its slot is free; a paused continuous run comes back.
  void reap() {
    if (!job_ || !job_->done.load()) return;
    job_->thread.join();
    log_.info(1, "Profiler completed for command ID: " + job_->command.command_id);
    job_.reset();
    if (paused_) {
      ProfilingCommand resume = *paused_;
      paused_.reset();
      log_.info(1, "Resuming continuous profiler for command " + resume.command_id);
      start(resume, false);
    }
  }

  void complete(const std::string& id, const std::string& status, const std::string& error = "") {
    std::string body = gp::upload::completion_body(id, identity_.hostname, status, 0, error);
    auto response = gp::upload::perform(gp::upload::completion_request(
        args_.api_server, args_.options.token, std::move(body), !args_.options.no_verify));
    if (response.status == 200) {
      log_.info(1, "Reported command completion for " + id + " (status=" + status + ")");
    } else if (response.status != 0) {
      log_.error("Failed to report command completion for " + id +
                 ". Status: " + std::to_string(response.status) + ", Response: " + response.body);
    } else {
      log_.error("Failed to send command completion for " + id + ": " + response.error);
    }
  }

  void process(const ProfilingCommand& c) {
    if (c.command_type == "stop") {
      log_.info(1, "Processing STOP command " + c.command_id);
      stop_job();
      paused_.reset();
      waiting_.clear();
      state_.mark_executed(c.command_id);
      complete(c.command_id, "completed");
      return;
    }
    if (c.command_type != "start") {
      log_.warning("Unknown command type: " + c.command_type);
      complete(c.command_id, "failed", "Unknown command type: " + c.command_type);
      return;
    }
    if (!c.continuous && job_ && !job_->command.continuous) {
      log_.info(2, "Ad-hoc slot busy; deferring command " + c.command_id);
      waiting_.push_back(c);
      return;
    }
    start(c, true);
  }

  // Starts `c` in the slot (pausing or replacing what runs there) and, for a new command,
  // acknowledges it as gProfiler does: at once, execution_time 0.
  void start(const ProfilingCommand& c, bool acknowledge) {
    auto settings = gp::upload::command_settings(c.profiling_command, identity_.hostname);
    if (!settings) {
      log_.warning("command " + c.command_id + ": " + settings.error().message);
      if (acknowledge) complete(c.command_id, "failed", settings.error().message);
      return;
    }
    if (job_) {
      if (!c.continuous && job_->command.continuous) {
        log_.info(1, "Pausing continuous profiler for ad-hoc command " + c.command_id);
        paused_ = job_->command;
      } else {
        log_.info(1, "Replacing the running profiler with command " + c.command_id);
      }
      stop_job();
    }
    if (!settings->for_this_host) {
      log_.info(1, "Hostname " + identity_.hostname + " not in target list, skipping profiling");
    } else {
      launch(c, options_for(*settings));
    }
    if (acknowledge) {
      state_.mark_executed(c.command_id);
      complete(c.command_id, "completed");
    }
  }

  gp::profile::Options options_for(const gp::upload::CommandSettings& s) {
    gp::profile::Options o = args_.options;
    if (s.duration_s) o.duration_s = *s.duration_s;
    if (s.frequency) o.frequency = *s.frequency;
    if (!s.pids.empty()) o.pids = s.pids;
    o.continuous = s.continuous;
    o.flamegraph = !s.continuous;
    if (s.profiling_mode && *s.profiling_mode == "allocation") {
      // As --mode allocation: Java allocations only, at the command line's --alloc-interval.
      if (o.alloc_interval == 0) o.alloc_interval = kDefaultAllocInterval;
      o.perf_mode = gp::profile::PerfMode::disabled;
      for (auto& r : o.runtimes)
        if (r.option != "java") r.mode = "disabled";
    } else if (s.profiling_mode && *s.profiling_mode == "cpu") {
      o.alloc_interval = 0;
    } else if (s.profiling_mode) {
      log_.warning("profiling_mode '" + *s.profiling_mode +
                   "' is not implemented by gp-profile: profiling CPU time");
    }
    if (s.disabled.count("perf") != 0) o.perf_mode = gp::profile::PerfMode::disabled;
    for (auto& r : o.runtimes)
      if (s.disabled.count(r.option) != 0) r.mode = "disabled";
    return o;
  }

  void launch(const ProfilingCommand& c, gp::profile::Options o) {
    auto job = std::make_unique<Job>();
    job->command = c;
    Job* j = job.get();
    log_.info(1, "Started profiler with command ID: " + c.command_id +
                     " (continuous=" + (c.continuous ? "True" : "False") + ")");
    job->thread = std::thread([this, j, o = std::move(o)] {
      run_(o, j->stop);
      j->done.store(true);
    });
    job_ = std::move(job);
  }

  const ProfileArgs& args_;
  Log& log_;
  const std::atomic<bool>& stop_;
  const RunSessions& run_;
  gp::upload::HeartbeatIdentity identity_;
  gp::upload::HeartbeatState state_;
  std::unique_ptr<Job> job_;
  std::optional<ProfilingCommand> paused_;
  std::deque<ProfilingCommand> waiting_;
};

}  // namespace

int heartbeat_loop(const ProfileArgs& args, Log& log, const std::atomic<bool>& stop,
                   const RunSessions& run_sessions) {
  Manager manager(args, log, stop, run_sessions);
  log.info(1, "Starting heartbeat mode - waiting for server commands...");
  const auto interval = std::chrono::seconds(args.heartbeat_interval_s);
  while (!stop.load()) {
    manager.beat();
    auto next = std::chrono::steady_clock::now() + interval;
    while (!stop.load() && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  log.info(0, "stopped by signal; the current session was abandoned");
  manager.stop_job();
  return gp::cli::kExitOk;
}

}  // namespace gp::profile_tool
