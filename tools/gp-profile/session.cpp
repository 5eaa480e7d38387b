#include "session.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>
#include <thread>

#include "gp/proc/process.h"
#include "gp/cli/tool.h"
#include "gp/profile/child.h"
#include "gp/profile/command.h"
#include "gp/profile/output.h"
#include "gp/record/summary.h"

namespace gp::profile_tool {
namespace {

namespace fs = std::filesystem;
using gp::profile::Command;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr auto kKillGrace = std::chrono::milliseconds(2000);
// gp-runtime, asked to stop, stops each runtime's profiler (a JFR recording, an agent) and
// removes its files in the targets before it exits: it gets longer before SIGKILL.
constexpr auto kRuntimeStopGrace = std::chrono::milliseconds(10000);

std::chrono::milliseconds stop_grace(const std::string& tool) {
  return tool == "gp-runtime" ? kRuntimeStopGrace : kKillGrace;
}
// Safety nets only: a stage that hangs is killed and the session goes on without it.
constexpr seconds kRecordSlack{60};    // gp-record: start-up and the final flush
constexpr seconds kRuntimeSlack{120};  // gp-runtime: attaching to JVMs etc. (gprofiler.md §12)
constexpr seconds kProcessTimeout{600};

enum class StageState { ok, failed, stopped };
struct StageResult {
  StageState state = StageState::ok;
  std::string why;                    // failure reason, or the warning of a partial (exit 3) result
  std::vector<std::string> problems;  // the stage's own warning and error lines (see below)
  int exit_code = 0;

  StageResult() = default;
  StageResult(StageState st, std::string reason) : state(st), why(std::move(reason)) {}
};

// A started stage: its pid and where its stderr goes.
struct Running {
  std::string tool;
  pid_t pid = 0;
  std::string err_path;
  Clock::time_point deadline;
};

struct Session {
  const SessionContext& c;
  int number;
  fs::path dir;
  std::string label() const { return "session " + std::to_string(number); }
};

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out;
}

// The warning and error lines a gp tool wrote on stderr ("gp-runtime: warning: pid 7 ...":
// "pid 7 ..."), without its name and the severity: gp-profile says both itself. Its info lines
// (progress, summaries) and hints are not problems.
std::vector<std::string> problem_lines(const std::string& err_path, const std::string& tool) {
  std::vector<std::string> out;
  const std::string lead = tool + ": ";
  for (const auto& line : gp::profile::tail_lines(err_path, 200)) {
    if (line.rfind(lead, 0) != 0) continue;
    std::string rest = line.substr(lead.size());
    for (std::string_view severity : {"warning: ", "error: "}) {
      if (rest.rfind(severity, 0) != 0) continue;
      std::string text = rest.substr(severity.size());
      if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
    }
  }
  return out;
}

// gp-runtime's line for a --pids process that is no runtime's ("process 7: not a Java, Python,
// Ruby process (comm 'sh')"): normal for gp-profile, whose system recorder profiles it.
bool not_a_runtime_target(const std::string& problem) { return problem.rfind("process ", 0) == 0; }

StageResult start(const Session& s, const std::string& program, const Command& cmd, seconds timeout,
                  Running& out) {
  out = {cmd.tool, 0, (s.dir / (cmd.tool + ".err")).string(), Clock::now() + timeout};
  s.c.log.info(2, s.label() + ": " + gp::profile::describe(cmd));
  auto pid = gp::profile::spawn({program, cmd.args, "/dev/null", out.err_path});
  if (!pid) return {StageState::failed, pid.error().message};
  out.pid = *pid;
  return {};
}

// Waits for a started stage and judges its result (exit 3 = usable, with a warning).
StageResult finish(const Session& s, const Running& r, const std::function<void()>& tick = {}) {
  if (r.pid == 0) return {StageState::failed, "not started"};
  auto w = gp::profile::wait_child(r.pid, r.deadline, &s.c.stop, tick);
  if (w.end != gp::profile::WaitEnd::exited) {
    gp::profile::kill_child(r.pid, stop_grace(r.tool));
    if (w.end == gp::profile::WaitEnd::stopped) return {StageState::stopped, "stopped"};
    return {StageState::failed, "timed out, killed"};
  }
  for (const auto& line : gp::profile::tail_lines(r.err_path, 40)) {
    // gp-upload --curlify-requests: gProfiler's DEBUG record, never sent to the server.
    const std::string curl = r.tool + ": API request (curl_command=";
    if (line.rfind(curl, 0) == 0) {
      s.c.log.info_local(1, s.label() + ": " + line.substr(r.tool.size() + 2));
    } else {
      s.c.log.info(2, s.label() + ": " + r.tool + ": " + line);
    }
  }
  if (w.status.ok()) return {};
  StageResult out;
  out.problems = problem_lines(r.err_path, r.tool);
  out.exit_code = w.status.signal == 0 ? w.status.code : -1;
  // What went wrong in the tool's words; its last lines when it named no problem.
  std::string said =
      out.problems.empty() ? joined(gp::profile::tail_lines(r.err_path, 2)) : joined(out.problems);
  if (out.exit_code == 3) {
    out.why = said;
    return out;
  }
  out.state = StageState::failed;
  out.why = w.status.describe() + (said.empty() ? "" : ": " + said);
  return out;
}

StageResult run(const Session& s, const std::string& program, const Command& cmd,
                std::string_view doing) {
  s.c.log.progress(s.label() + ": " + std::string(doing));
  Running r;
  if (auto started = start(s, program, cmd, kProcessTimeout, r); started.state != StageState::ok)
    return started;
  auto result = finish(s, r);
  if (result.state == StageState::ok && !result.why.empty())
    s.c.log.warning(s.label() + ": " + cmd.tool + ": " + result.why);
  return result;
}

bool has_data(const fs::path& p) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  return !ec && size > 0;
}

void stage_failed(const Session& s, std::string_view tool, const StageResult& r,
                  std::string_view consequence) {
  s.c.log.warning(s.label() + ": " + std::string(tool) + " failed (" + r.why + "); " +
                  std::string(consequence));
}

// One of the two recorders of a session (gp-record, gp-runtime).
struct Recorder {
  std::string program;  // empty: not run
  Command command;
  std::string path;
  seconds timeout{0};
  std::string consequence;  // what its failure means for the profile
  Running running;
  StageResult started{StageState::failed, "not started"};
};

Recorder make_recorder(const std::string& program, Command command, std::string path,
                       seconds timeout, std::string consequence) {
  Recorder r;
  r.program = program;
  r.path = std::move(path);
  r.command = std::move(command);
  r.timeout = timeout;
  r.consequence = std::move(consequence);
  return r;
}

void launch(const Session& s, Recorder& r) {
  if (!r.program.empty()) r.started = start(s, r.program, r.command, r.timeout, r.running);
}

// Problems of a recorder's partial result: --pids processes that are no runtime's are said
// once per run (they are the same every session); the rest, for this session, in one line.
void report_problems(const Session& s, const std::string& tool, const StageResult& res) {
  std::vector<std::string> session_problems;
  for (const auto& p : res.problems) {
    if (!not_a_runtime_target(p)) {
      session_problems.push_back(p);
    } else if (s.c.said_once == nullptr || s.c.said_once->insert(p).second) {
      s.c.log.warning(tool + ": " + p + " (said once per run)");
    }
  }
  if (!session_problems.empty()) {
    s.c.log.warning(s.label() + ": " + tool + ": " + joined(session_problems));
  } else if (res.problems.empty() && !res.why.empty()) {
    s.c.log.warning(s.label() + ": " + tool + ": " + res.why);
  }
}

bool only_not_runtime_targets(const StageResult& res) {
  return !res.problems.empty() &&
         std::all_of(res.problems.begin(), res.problems.end(), not_a_runtime_target);
}

// The recorder's archive, or "" (logged) when it did not write one.
std::string collect(const Session& s, Recorder& r, const std::function<void()>& tick) {
  if (r.program.empty()) return "";
  StageResult res = r.started.state == StageState::ok ? finish(s, r.running, tick) : r.started;
  if (res.state == StageState::stopped) return "";
  if (res.state == StageState::ok && has_data(r.path)) {
    if (res.exit_code == 3) report_problems(s, r.command.tool, res);
    return r.path;
  }
  // gp-runtime found no process to profile among --pids: not a failure of this session.
  if (res.state == StageState::failed && res.exit_code == 1 && r.command.tool == "gp-runtime" &&
      only_not_runtime_targets(res)) {
    report_problems(s, r.command.tool, res);
    return "";
  }
  if (res.state == StageState::ok) res.why = "no archive written";
  stage_failed(s, r.command.tool, res, r.consequence);
  return "";
}

struct Recorded {
  std::string system, runtime;  // empty: that recorder did not run or failed
  gp::profile::SessionTimes times;
  bool cannot_run = false;  // the command could not be started
};

// The system archive of a session of the run's continuous gp-record ("" when there is none).
std::string switch_system(const Session& s, const std::string& consequence) {
  auto file = s.c.system_record->end_session(s.c.stop);
  if (auto problems = s.c.system_record->new_problems(); !problems.empty())
    s.c.log.warning(s.label() + ": gp-record: " + joined(problems));
  if (file) return *file;
  if (!s.c.stop.load())
    s.c.log.warning(s.label() + ": gp-record failed (" + file.error().message + "); " +
                    consequence);
  return "";
}

// `gp-profile -- COMMAND`: gp-record samples the command's cgroup from before its exec until it
// has exited. The runtime profilers, which attach to running processes, are not run (Python
// frames come from gp-record with --python-mode pyperf).
Recorded record_command(const Session& s) {
  auto& command = *s.c.command;
  const auto& o = s.c.options;
  const std::string sys_path = (s.dir / "system.gpa").string();
  Recorder sys = make_recorder(
      s.c.tools.record, gp::profile::record_command(gp::profile::options_for_command(o, command), sys_path),
      sys_path, kProcessTimeout, "no profile this time");
  Recorded out;
  auto wall_start = std::chrono::system_clock::now();
  launch(s, sys);
  auto ready = sys.started.state == StageState::ok
                   ? gp::profile::wait_attached(sys.running.pid, sys_path, s.c.stop)
                   : gp::profile::RecorderStart::exited;
  if (ready != gp::profile::RecorderStart::attached) {
    if (ready == gp::profile::RecorderStart::stopped)
      gp::profile::kill_child(sys.running.pid, kKillGrace);
    else out.system = collect(s, sys, {});  // says why gp-record ended
    return out;
  }
  if (auto released = command.release(); !released) {
    gp::cli::error(released.error().message);
    gp::profile::kill_child(sys.running.pid, kKillGrace);
    out.cannot_run = true;
    return out;
  }
  auto began = Clock::now();
  auto tick = [&] {
    auto elapsed = std::chrono::duration_cast<seconds>(Clock::now() - began).count();
    s.c.log.progress(s.label() + ": recording the command, " + std::to_string(elapsed) + " s");
  };
  auto last_tick = began;
  tick();
  while (!command.exited() && !s.c.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (Clock::now() - last_tick >= seconds(1)) {
      last_tick = Clock::now();
      tick();
    }
  }
  // gp-record's first SIGINT ends its session normally: its last samples are drained.
  ::kill(sys.running.pid, SIGINT);
  sys.running.deadline = Clock::now() + kRecordSlack;
  out.system = collect(s, sys, tick);
  out.times = {gp::profile::utc_stamp(wall_start),
               gp::profile::utc_stamp(std::chrono::system_clock::now())};
  return out;
}

// Both recorders run side by side for the session's duration (gprofiler.md §1: perf and the
// runtime profilers sample the same window; gp-merge scales the runtime counts to perf's).
Recorded record(const Session& s) {
  const auto& o = s.c.options;
  const seconds duration{o.duration_s};
  const std::string sys_path = (s.dir / "system.gpa").string();
  const std::string rt_path = (s.dir / "runtime.gpa").string();
  const auto& tools = s.c.tools;
  // This session's options may turn off what the run's found (a heartbeat command's
  // profiling_mode allocation: Java only, no gp-record).
  std::string record_tool = gp::profile::system_enabled(o) ? tools.record : "";
  const std::string runtime_tool = gp::profile::runtimes_enabled(o) ? tools.runtime : "";
  if (o.skip_system_above > 0 && !record_tool.empty()) {
    // gProfiler's --skip-system-profilers-above: perf is not started on a host this crowded.
    size_t processes = gp::proc::list_processes("/proc").size();
    if (processes > o.skip_system_above) {
      s.c.log.warning(s.label() + ": " + std::to_string(processes) +
                      " processes, more than --skip-system-profilers-above " +
                      std::to_string(o.skip_system_above) + ": no system profiler this session");
      record_tool.clear();
    }
  }
  const std::string sys_consequence =
      runtime_tool.empty() ? "no profile this time" : "this profile has runtime stacks only";
  gp::profile::Options record_options = o;
  if (s.c.cgroups != nullptr && !record_tool.empty()) {
    record_options.cgroups = s.c.cgroups->top(
        std::min(o.perf_max_cgroups, gp::profile::kMaxRecordCgroups), o.perf_max_docker_containers);
    if (record_options.cgroups.empty()) {
      // gProfiler never falls back to the whole system when cgroups were asked for.
      s.c.log.warning(s.label() + ": --perf-use-cgroups: no cgroup used CPU; " + sys_consequence);
      record_tool.clear();
    } else {
      std::string names;
      for (const auto& dir : record_options.cgroups) names += (names.empty() ? "" : ", ") + dir;
      s.c.log.info(1, s.label() + ": sampling the " +
                          std::to_string(record_options.cgroups.size()) +
                          " busiest cgroups: " + names);
    }
  }
  // Continuous: the run's one gp-record (not run in a session that skips system profilers).
  ContinuousRecord* continuous = record_tool.empty() ? nullptr : s.c.system_record;
  if (s.c.system_record != nullptr && continuous == nullptr) s.c.system_record->stop();
  // Other cgroups than the running gp-record samples: it starts again with them.
  if (continuous != nullptr && s.c.cgroups != nullptr && s.c.cgroups->changed()) continuous->stop();
  if (continuous != nullptr) {
    continuous->restart_if_rss_exceeded(s.c.memory_guard);
    if (auto st = continuous->ensure_running(record_options); !st) {
      s.c.log.warning(s.label() + ": gp-record failed (" + st.error().message + "); " +
                      sys_consequence);
      continuous = nullptr;
      record_tool.clear();
    }
  }
  Recorder sys = make_recorder(continuous != nullptr ? "" : record_tool,
                               gp::profile::record_command(record_options, sys_path), sys_path,
                               duration + kRecordSlack, sys_consequence);
  Recorder rt = make_recorder(
      runtime_tool, gp::profile::runtime_command(o, rt_path), rt_path, duration + kRuntimeSlack,
      record_tool.empty() ? "no profile this time" : "this profile has system stacks only");
  auto wall_start = std::chrono::system_clock::now();
  launch(s, sys);
  launch(s, rt);
  auto began = Clock::now();
  auto tick = [&] {
    auto elapsed = std::chrono::duration_cast<seconds>(Clock::now() - began).count();
    s.c.log.progress(s.label() + ": recording " + std::to_string(elapsed) + "/" +
                     std::to_string(o.duration_s) + " s");
  };
  tick();
  Recorded out;
  if (continuous != nullptr) {
    continuous->wait(began + duration, s.c.stop, tick);
    if (!s.c.stop.load()) out.system = switch_system(s, sys_consequence);
  } else {
    out.system = collect(s, sys, tick);
  }
  if (s.c.stop.load() && rt.running.pid != 0) {
    gp::profile::kill_child(rt.running.pid, kRuntimeStopGrace);
  } else {
    out.runtime = collect(s, rt, tick);
  }
  out.times = {gp::profile::utc_stamp(wall_start),
               gp::profile::utc_stamp(std::chrono::system_clock::now())};
  return out;
}

// Merge (when there are runtime stacks) and symbolize: the archive to fold.
std::string combine(const Session& s, const Recorded& rec) {
  const auto& o = s.c.options;
  std::string archive = rec.system.empty() ? rec.runtime : rec.system;
  std::string merged = (s.dir / "merged.gpa").string();
  if (auto cmd = gp::profile::merge_command(o, rec.system, rec.runtime, merged)) {
    auto r = run(s, s.c.tools.merge, *cmd, "merging");
    if (r.state == StageState::ok) archive = merged;
    if (r.state == StageState::failed)
      stage_failed(s, "gp-merge", r,
                   rec.system.empty() ? "using the runtime archive unmerged"
                                      : "this profile has system stacks only");
  }
  if (s.c.stop.load()) return "";
  std::string symbolized = (s.dir / "symbolized.gpa").string();
  auto r = run(s, s.c.tools.symbolize, gp::profile::symbolize_command(archive, symbolized),
               "symbolizing");
  if (r.state == StageState::ok) return symbolized;
  if (r.state == StageState::failed)
    stage_failed(s, "gp-symbolize", r, "native frames stay addresses");
  return archive;
}

uint64_t col_samples(const fs::path& col) {
  std::ifstream in(col);
  uint64_t total = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto space = line.rfind(' ');
    if (space != std::string::npos) total += std::strtoull(line.c_str() + space + 1, nullptr, 10);
  }
  return total;
}

// Writes profile_<end>.col/.html into --output-dir; returns the published .col ("" on failure).
std::string publish(const Session& s, const std::string& col, const Recorded& rec) {
  const auto& o = s.c.options;
  fs::path dir = o.output_dir;
  std::string stem = gp::profile::profile_stem(dir, rec.times.end);
  std::string html = (s.dir / "profile.html").string();
  bool have_html = false;
  if (o.flamegraph) {
    auto r = run(s, s.c.tools.flame, gp::profile::flame_command(col, html, rec.times),
                 "rendering the flamegraph");
    have_html = r.state == StageState::ok && has_data(html);
    if (r.state == StageState::failed) stage_failed(s, "gp-flame", r, "no .html this time");
  }
  if (s.c.stop.load()) return "";
  auto moved = gp::profile::publish(col, dir, stem + ".col", gp::profile::kLastProfileLink,
                                    o.rotating_output);
  if (!moved) {
    s.c.log.warning(s.label() + ": " + moved.error().message);
    return "";
  }
  if (have_html) {
    auto page = gp::profile::publish(html, dir, stem + ".html", gp::profile::kLastFlamegraphLink,
                                     o.rotating_output);
    if (!page) s.c.log.warning(s.label() + ": " + page.error().message);
  }
  return (dir / (stem + ".col")).string();
}

// After a command's profile, on a terminal: its hottest functions, as gp-record shows them.
void show_top_functions(const SessionContext& c, const std::string& archive) {
  std::ostringstream table;
  if (auto st = gp::record::write_top_functions(archive, 10, table); !st) {
    c.log.warning("no summary: " + st.error().message);
    return;
  }
  if (!table.str().empty())
    c.log.terminal_text("\nhottest functions:\n" + table.str());
}

}  // namespace

SessionOutcome run_session(const SessionContext& c, int number) {
  Session s{c, number, c.work_dir / ("session-" + std::to_string(number))};
  std::error_code ec;
  fs::create_directories(s.dir, ec);
  if (ec) {
    c.log.error(s.label() + ": cannot create '" + s.dir.string() + "': " + ec.message());
    return SessionOutcome::failed;
  }
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{s.dir};
  Recorded rec = c.command != nullptr ? record_command(s) : record(s);
  if (rec.cannot_run) return SessionOutcome::cannot_run;
  // A continuous gp-record's session file is this session's until it ends.
  struct Release {
    ContinuousRecord* owner;
    std::string path;
    ~Release() {
      if (owner != nullptr && !path.empty()) owner->release(path);
    }
  } release{c.system_record, c.system_record != nullptr ? rec.system : ""};
  if (c.stop.load()) return SessionOutcome::stopped;
  if (rec.system.empty() && rec.runtime.empty()) {
    c.log.error(s.label() + ": no profile: every recorder failed");
    return SessionOutcome::failed;
  }
  std::string archive = combine(s, rec);
  if (c.stop.load()) return SessionOutcome::stopped;
  std::string col = (s.dir / "profile.col").string();
  gp::profile::Options fold_options = c.options;
  if (!fold_options.external_metadata.empty()) {
    // gProfiler ignores the file in a session where it is older than 5 minutes.
    auto age = gp::profile::file_age(fold_options.external_metadata);
    if (!age || *age > gp::profile::kExternalMetadataMaxAge) {
      c.log.warning(s.label() + ": external metadata file '" + fold_options.external_metadata +
                    "' " + (age ? "is older than 5 minutes" : "cannot be read") +
                    ": not used in this session");
      fold_options.external_metadata.clear();
    }
  }
  auto folded =
      run(s, c.tools.fold, gp::profile::fold_command(fold_options, archive, col), "folding");
  if (c.stop.load()) return SessionOutcome::stopped;
  if (folded.state != StageState::ok || !has_data(col)) {
    c.log.error(s.label() + ": no profile: gp-fold failed (" + folded.why + ")");
    return SessionOutcome::failed;
  }
  if (c.agent != nullptr) {
    gp::profile::MetricsMonitor::Metrics metrics;
    if (c.metrics != nullptr) metrics = c.metrics->take();
    // Without metadata collection gProfiler's header metadata has no agent fields, no time.
    static const json::Value nothing = json::Value::object();
    const bool collect = c.options.metadata_collection;
    std::optional<gp::profile::HwMetrics> hw;
    if (!c.hw_metrics_dir.empty())
      hw = gp::profile::read_hw_metrics(c.hw_metrics_dir, gp::profile::host_name());
    if (auto st = gp::profile::apply_agent_header(col, collect ? *c.agent : nothing,
                                                  collect ? rec.times.end : "", metrics,
                                                  hw ? &*hw : nullptr);
        !st)
      c.log.warning(s.label() + ": " + st.error().message);
  }
  uint64_t samples = col_samples(col);
  std::string summary = s.label() + ": " + std::to_string(samples) + " samples";
  bool delivered = false;
  if (!c.options.output_dir.empty()) {
    std::string published = publish(s, col, rec);
    if (c.stop.load()) return SessionOutcome::stopped;
    if (!published.empty()) {
      col = published;
      summary += ", wrote '" + published + "'";
      delivered = true;
    }
  }
  if (c.options.upload) {
    auto r =
        run(s, c.tools.upload, gp::profile::upload_command(c.options, col, rec.times), "uploading");
    if (c.stop.load()) return SessionOutcome::stopped;
    if (r.state == StageState::ok) {
      summary += ", uploaded to " + c.options.server_host;
      delivered = true;
    } else {
      stage_failed(s, "gp-upload", r,
                   c.options.spool_dir.empty()
                       ? "this profile was not uploaded"
                       : "unless refused, it waits in '" + c.options.spool_dir +
                             "' and is sent before the next one");
    }
  }
  c.log.info(0, summary);
  if (c.command != nullptr) show_top_functions(c, archive);
  return delivered ? SessionOutcome::ok : SessionOutcome::failed;
}

}  // namespace gp::profile_tool
