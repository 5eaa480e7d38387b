// gp-profile's process: preconditions, lock, pid file, signals, the session loop, upload-file.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "cli.h"
#include "gp/fold/external_metadata.h"
#include "gp/profile/agent.h"
#include "gp/profile/child.h"
#include "gp/profile/diagnostics.h"
#include "gp/profile/hw_metrics.h"
#include "gp/profile/instance.h"
#include "gp/profile/usage.h"
#include "gp/record/command.h"
#include "gp/runtime/discovery.h"
#include "gp/runtime/java_safemode.h"
#include "gp/runtime/java_safemode_watch.h"
#include "gp/runtime/work_dir.h"
#include "gp/upload/remote_logs.h"
#include "gp/util/version.h"
#include "heartbeat.h"
#include "log.h"
#include "no_effect.h"
#include "session.h"

namespace gp::profile_tool {
namespace {

namespace fs = std::filesystem;
using gp::profile::Options;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);  // set from a signal handler

// With a command, the first SIGINT/SIGTERM goes on to it (gp-profile's session ends when it
// exits, as gp-record -- COMMAND's does); a second one stops gp-profile.
volatile sig_atomic_t g_forward = 0;

void on_signal(int sig, siginfo_t* info, void*) {
  if (g_forward != 0) {
    g_forward = 0;
    gp::record::forward_to_command(sig, info);
    return;
  }
  g_stop.store(true);
}

void install_signals() {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
}

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::optional<std::string> locate(const std::string& name) {
  const char* path = std::getenv("PATH");
  return gp::profile::find_tool(name, self_exe(), path ? path : "/usr/local/bin:/usr/bin:/bin");
}

// The tools this configuration needs; an error names the first one missing.
Result<Tools> find_tools(const Options& o, Log& log) {
  Tools t;
  struct Need {
    const char* name;
    std::string* slot;
    bool needed;
  };
  bool runtime = gp::profile::runtimes_enabled(o);
  const Need needs[] = {
      {"gp-record", &t.record, gp::profile::system_enabled(o)},
      {"gp-merge", &t.merge, runtime},
      {"gp-symbolize", &t.symbolize, true},
      {"gp-fold", &t.fold, true},
      {"gp-flame", &t.flame, !o.output_dir.empty() && o.flamegraph},
      {"gp-upload", &t.upload, o.upload},
  };
  for (const auto& n : needs) {
    if (!n.needed) continue;
    auto found = locate(n.name);
    if (!found)
      return make_error(std::string("cannot find '") + n.name + "' next to '" + self_exe() +
                        "' or on PATH");
    *n.slot = *found;
  }
  if (runtime) {
    if (auto found = locate("gp-runtime")) {
      t.runtime = *found;
    } else {
      log.warning("gp-runtime is not installed: runtime profilers are skipped");
    }
  }
  if (t.record.empty() && t.runtime.empty())
    return make_error("All profilers are disabled! (--perf-mode disabled and no gp-runtime)");
  return t;
}

// The private temporary directory ($TMPDIR/gp-profile-XXXXXX), removed with everything in it
// when gp-profile ends; a later start removes those of runs killed with SIGKILL (work_dir.h).
// The tools it runs make theirs in it ($TMPDIR for them), so a gp-runtime killed on the way
// out leaves nothing behind either.
Result<gp::runtime::WorkDir> make_work_dir() {
  auto dir = gp::runtime::WorkDir::create("", "gp-profile-");
  if (!dir) return dir.error();
  std::string tmp = dir->path() + "/tmp";
  if (::mkdir(tmp.c_str(), 0700) == 0) ::setenv("TMPDIR", tmp.c_str(), 1);
  return dir;
}

// --controller-pid: gone when kill(pid, 0) says ESRCH.
bool controller_gone(long pid) {
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

void sleep_until(std::chrono::steady_clock::time_point when, long controller,
                 const std::atomic<bool>& stop) {
  while (!stop.load() && std::chrono::steady_clock::now() < when && !controller_gone(controller))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// --heartbeat-file: created if missing, its modification time set to now.
void touch(const std::string& path, Log& log) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 || ::futimens(fd, nullptr) != 0)
    log.warning("cannot touch heartbeat file '" + path + "': " + ::strerror(errno));
  if (fd >= 0) ::close(fd);
}

// Sessions with options `o` until `stop` (SIGTERM/SIGINT, or a heartbeat's stop command); one
// without --continuous.
// Calls f with each line of text (without its newline).
template <typename F>
void for_each_line(const std::string& text, F f) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    f(std::string_view(text).substr(at, end - at));
    at = end + 1;
  }
}

// gProfiler's limits on perf's memory (512 MiB after an hour), or GP_PROFILE_RECORD_MEMORY_LIMIT's
// "MIB,SECONDS" (for tests, and nodes where another bound suits).
MemoryGuard memory_guard(const ProfileArgs& args) {
  MemoryGuard guard;
  guard.on = args.memory_restart;
  if (const char* env = std::getenv("GP_PROFILE_RECORD_MEMORY_LIMIT")) {
    unsigned long long mib = 0, after = 0;
    if (std::sscanf(env, "%llu,%llu", &mib, &after) == 2) {
      guard.rss_limit = mib << 20;
      guard.after = std::chrono::seconds(after);
    } else {
      gp::cli::warning("GP_PROFILE_RECORD_MEMORY_LIMIT='" + std::string(env) +
                       "' is not MIB,SECONDS: ignored");
    }
  }
  return guard;
}

// What gp-runtime left in the Java safemode state: the hs_err reports (a profiled JVM went down
// and wrote one), logged as gProfiler's "Found Hotspot error log" warning, once, a log line each;
// then, once, that Java profiling was turned off (`said_off`: already said).
void log_java_safemode(const Options& o, Log& log, bool& said_off) {
  if (o.java_safemode_state.empty()) return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(o.java_safemode_state, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("hserr-", 0) != 0 || entry.path().extension() != ".log") continue;
    std::string text = gp::profile::read_text(entry.path().string());
    while (!text.empty() && text.back() == '\n') text.pop_back();
    for_each_line(text, [&](auto line) {
      if (!line.empty()) log.warning(line);
    });
    fs::remove(entry.path(), ec);
  }
  std::string cause = gp::profile::read_text(o.java_safemode_state + "/disabled");
  while (!cause.empty() && cause.back() == '\n') cause.pop_back();
  if (!cause.empty() && !said_off) {
    said_off = true;
    log.warning("Java profiling has been disabled, will avoid profiling any new java processes "
                "(safemode cause: " + cause + ")");
  }
}

int profile_loop(const ProfileArgs& args, const Options& o, const std::atomic<bool>& stop,
                 const Tools& tools, const fs::path& work, Log& log, const json::Value& agent,
                 gp::profile::MetricsMonitor* metrics, const std::string& run_id,
                 gp::record::RecordedCommand* command = nullptr) {
  std::set<std::string> said_once;
  SessionContext context{o, tools, work, stop, log, &agent, metrics, &said_once};
  context.command = command;
  context.hw_metrics_dir = args.hw_metrics_dir;
  std::optional<gp::profile::CgroupRanking> cgroups;
  if (o.perf_use_cgroups) context.cgroups = &cgroups.emplace();
  // Continuous: one gp-record for every session, as gProfiler keeps perf running.
  std::optional<ContinuousRecord> system_record;
  if (o.continuous && !tools.record.empty()) {
    system_record.emplace(tools.record, work / "system", log);
    context.system_record = &*system_record;
    context.memory_guard = memory_guard(args);
  }
  int failures = 0;
  std::optional<gp::profile::UsageLog> usage;  // --log-usage
  if (args.log_usage) usage.emplace();
  std::chrono::steady_clock::time_point last_diagnostics;  // --diagnostics
  bool java_off = false;  // said that the Java safemode turned Java profiling off
  for (int number = 1;; ++number) {
    auto started = std::chrono::steady_clock::now();
    // gProfiler's cycle ids: the run's id for a single session, a new one per continuous one.
    log.set_cycle_id(o.continuous ? gp::upload::random_uuid4() : run_id);
    // As gProfiler's run_continuous: touched as each continuous session starts.
    if (o.continuous && !args.heartbeat_file.empty()) touch(args.heartbeat_file, log);
    auto outcome = run_session(context, number);
    log_java_safemode(o, log, java_off);
    if (usage) log.info(0, usage->cycle());
    if (args.diagnostics && (number == 1 || std::chrono::steady_clock::now() - last_diagnostics >=
                                                gp::profile::kDiagnosticsInterval)) {
      // gProfiler's log_diagnostics, at debug level; the listings stay local, as gProfiler sends
      // them with no_extra_to_server.
      last_diagnostics = std::chrono::steady_clock::now();
      log.info_local(1, "Running processes:");
      for_each_line(gp::profile::process_listing(), [&](auto line) { log.info_local(1, line); });
      log.info_local(1, "Kernel log:");
      for_each_line(gp::profile::kernel_log_tail(), [&](auto line) { log.info_local(1, line); });
    }
    log.set_cycle_id(std::nullopt);
    if (outcome == SessionOutcome::cannot_run) return gp::record::kExitCannotRun;
    if (outcome == SessionOutcome::stopped || stop.load()) break;
    if (outcome == SessionOutcome::failed) ++failures;
    // As gp-record -- COMMAND: the command's status (gp-profile's failure when it exited 0).
    if (command != nullptr && command->exit_code() != 0) return command->exit_code();
    if (!o.continuous) return failures == 0 ? gp::cli::kExitOk : gp::cli::kExitFailure;
    sleep_until(gp::profile::next_session_start(started, std::chrono::seconds(o.duration_s),
                                                std::chrono::steady_clock::now()),
                args.controller_pid, stop);
    if (controller_gone(args.controller_pid)) {
      log.info(
          0, "controller process " + std::to_string(args.controller_pid) + " has exited: stopping");
      return gp::cli::kExitOk;
    }
    if (stop.load()) break;
  }
  if (&stop != &g_stop) return gp::cli::kExitOk;  // a heartbeat job: its manager says why
  log.info(0, "stopped by signal; the current session was abandoned");
  return gp::cli::kExitOk;
}

// gProfiler's is_running_in_init_pid: the pid namespace of the host is the kernel's first one.
bool in_init_pid_namespace() {
  struct stat st {};
  constexpr ino_t kProcPidInitIno = 0xEFFFFFFCU;
  return ::stat("/proc/self/ns/pid", &st) != 0 || st.st_ino == kProcPidInitIno;
}

// Whether gp-runtime profiles JVMs in this run.
bool java_enabled(const Options& o) {
  return std::any_of(o.runtimes.begin(), o.runtimes.end(),
                     [](const auto& r) { return r.option == "java" && r.mode != "disabled"; });
}

// Everything that must hold before profiling starts; an error is fatal (exit 1).
Status preconditions(const ProfileArgs& args) {
  const Options& o = args.options;
  if (!o.rootless && ::geteuid() != 0)
    return make_error("Must run gp-profile as root, please re-run (or use --rootless with --pids)");
  if (args.pid_ns_check && !in_init_pid_namespace())
    return make_error(
        "Please run me in the init PID namespace! In Docker, make sure you pass '--pid=host'. In "
        "Kubernetes, add 'hostPID: true' in the Pod spec. You can disable this check with "
        "--disable-pidns-check.");
  // As gProfiler: a PerfSpect path that names no file ends it at start.
  if (!args.perfspect_path.empty() && !fs::is_regular_file(args.perfspect_path))
    return make_error("PerfSpect tool " + args.perfspect_path + " does not exist!");
  if (!o.pids.empty() && !gp::profile::any_alive(o.pids))
    return make_error("none of the processes given with --pids is running");
  if (!o.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.output_dir, ec);
    if (ec || !fs::is_directory(o.output_dir))
      return make_error("cannot create output directory '" + o.output_dir +
                        "': " + (ec ? ec.message() : "a component is not a directory"));
  }
  return ok_status();
}

// --python-skip-pyperf-profiler-above N, as gProfiler's PyPerf start: with more Python processes
// than N (those gp-runtime would profile as Python), no PyPerf. Under --python-mode pyperf
// gProfiler has no py-spy to fall back on, so Python goes unprofiled, which gp-profile says.
void skip_pyperf_above(ProfileArgs& args) {
  if (!args.options.python_frames || args.pyperf_skip_above <= 0) return;
  gp::runtime::DiscoveryOptions d;
  d.runtimes = {gp::runtime::Runtime::python};
  size_t count = gp::runtime::ProcessWatcher(d).scan().size();
  if (count <= static_cast<size_t>(args.pyperf_skip_above)) return;
  args.options.python_frames = false;
  gp::cli::warning("PyPerf skipped: " + std::to_string(count) +
                   " Python processes exceed --python-skip-pyperf-profiler-above " +
                   std::to_string(args.pyperf_skip_above) +
                   "; with --python-mode pyperf there is no py-spy fallback (as gProfiler): "
                   "Python frames are not profiled");
}

// gProfiler's start-up check of the Studio (ProfilerAPIClient's health check): one attempt;
// a refusal or no connection ends gp-profile with gProfiler's message, before any profiling.
Status studio_health_check(const Options& o, const std::string& upload, const fs::path& work,
                           Log& log) {
  auto cmd = gp::profile::health_check_command(o);
  std::string err = (work / "health-check.err").string();
  auto pid = gp::profile::spawn({upload, cmd.args, "/dev/null", err});
  if (!pid) return pid.error();
  auto w = gp::profile::wait_child(
      *pid, std::chrono::steady_clock::now() + std::chrono::seconds(60), &g_stop);
  if (w.end != gp::profile::WaitEnd::exited) {
    gp::profile::kill_child(*pid, std::chrono::milliseconds(1000));
    return make_error(w.end == gp::profile::WaitEnd::stopped ? "stopped"
                                                             : "health check timed out");
  }
  for (const auto& line : gp::profile::tail_lines(err, 10))
    if (line.rfind("gp-upload: API request (curl_command=", 0) == 0)
      log.info_local(1, line.substr(11));
  if (w.status.ok()) return ok_status();
  auto last = gp::profile::tail_lines(err, 1);
  std::string why = last.empty() ? w.status.describe() : last.back();
  const std::string prefix = "gp-upload: error: ";
  if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
  return make_error(why);
}

// gProfiler's remote logs: every record of this run goes to --api-server in batches.
std::unique_ptr<gp::upload::RemoteLogs> start_remote_logs(const ProfileArgs& args,
                                                          const std::string& run_id, Log& log) {
  auto url = gp::upload::logs_url(args.api_server);
  if (!url) {
    log.local_warning("remote logs are not sent: " + url.error().message);
    return nullptr;
  }
  gp::upload::RemoteLogsConfig c;
  c.url = *url;
  c.token = args.options.token;
  c.verify_tls = !args.options.no_verify;
  json::Value md = json::Value::object();
  md.set("run_id", json::Value::from_string(run_id));
  md.set("gprofiler_version", json::Value::from_string(gp::profile::kGprofilerAgentVersion));
  md.set("service_name", json::Value::from_string(args.options.service_name));
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) == 0) md.set("hostname", json::Value::from_string(host));
  c.metadata = std::move(md);
  // As glogger's own failures: said locally, never sent (they would feed themselves).
  c.on_error = [](const std::string& message) { gp::cli::warning(message); };
  return std::make_unique<gp::upload::RemoteLogs>(std::move(c));
}

int upload_file(const ProfileArgs& args) {
  auto program = locate("gp-upload");
  if (!program) {
    gp::cli::error("cannot find 'gp-upload' next to '" + self_exe() + "' or on PATH");
    return gp::cli::kExitFailure;
  }
  ::setenv("GPROFILER_TOKEN", args.options.token.c_str(), 1);  // not in gp-upload's argv
  auto cmd = gp::profile::upload_file_command(args.options, args.file_path);
  if (args.common.verbose > 0) cmd.args.insert(cmd.args.begin(), "-v");
  std::vector<char*> argv{program->data()};
  for (auto& a : cmd.args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(program->c_str(), argv.data());  // gp-upload's own status and messages are the result
  gp::cli::error("cannot run '" + *program + "': " + ::strerror(errno));
  return gp::cli::kExitFailure;
}

// gp-profile -- COMMAND: one session, from the command's first instruction until it exits.
int profile_command(const ProfileArgs& args, const Tools& tools, const fs::path& work, Log& log,
                    const json::Value& agent, gp::profile::MetricsMonitor* metrics,
                    const std::string& run_id) {
  auto command = gp::record::RecordedCommand::start(args.options.command);
  if (!command) {
    gp::cli::error(command.error().message);
    return gp::record::kExitCannotRun;
  }
  if (command->cgroup().empty())
    log.warning("only the command's own process is recorded, not the processes it starts (" +
                command->no_cgroup_reason() + ")");
  g_forward = 1;
  int status = profile_loop(args, args.options, g_stop, tools, work, log, agent, metrics, run_id,
                            &*command);
  g_forward = 0;
  return status;
}

// --enable-hw-metrics-collection with --perfspect-path: PerfSpect runs once, from the start, and
// is ended (SIGTERM) with gp-profile if still running, as gProfiler's HWMetricsMonitor.
struct PerfSpectRun {
  pid_t pid = 0;
  ~PerfSpectRun() {
    if (pid > 0) gp::profile::kill_child(pid, std::chrono::seconds(2));
  }
};

void start_perfspect(ProfileArgs& args, const fs::path& work, Log& log, PerfSpectRun& run) {
  if (::access(args.perfspect_path.c_str(), X_OK) != 0) {
    log.warning("PerfSpect tool " + args.perfspect_path +
                " is not executable: no hardware metrics are collected");
    return;
  }
  log.info(1, "Using perfspect path: " + args.perfspect_path);
  const fs::path dir = work / "perfspect_data";
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto cmd = gp::profile::perfspect_command(args.perfspect_path,
                                            static_cast<unsigned>(args.perfspect_duration_s),
                                            dir.string(), args.common.verbose > 0);
  log.info(2, gp::profile::describe(cmd));
  auto pid = gp::profile::spawn({cmd.tool, cmd.args, (work / "perfspect.out").string(),
                                 (work / "perfspect.err").string()});
  if (!pid) {
    log.warning("cannot run PerfSpect: " + pid.error().message + "; no hardware metrics");
    return;
  }
  run.pid = *pid;
  args.hw_metrics_dir = dir.string();
}

}  // namespace

int run(ProfileArgs& args) {
  std::string names;
  for (const auto& n : args.not_implemented) {
    if (auto said = no_effect_at_run_time(n.substr(2)); !said.empty()) {
      gp::cli::warning(said);
    } else {
      names += (names.empty() ? "" : ", ") + n;
    }
  }
  if (!names.empty()) gp::cli::warning("not implemented by gp-profile, ignored: " + names);
  for (const auto& note : args.start_notes) gp::cli::warning(note);
  if (args.extract_resources) {
    gp::cli::warning("extract-resources: gp-profile has no bundled resources; nothing to extract");
    return gp::cli::kExitOk;
  }
  if (args.upload_file) return upload_file(args);
  const Options& o = args.options;
  ::umask(022);
  if (args.disable_core_files) {
    struct rlimit none {
      0, 0
    };
    ::setrlimit(RLIMIT_CORE, &none);  // inherited by every profiler gp-profile starts
  }
  if (auto ok = preconditions(args); !ok) {
    gp::cli::error(ok.error().message);
    return gp::cli::kExitFailure;
  }
  skip_pyperf_above(args);
  auto lock = gp::profile::InstanceLock::acquire("gp_profile_lock");
  if (!lock) {
    gp::cli::error("could not acquire gp-profile's lock: is it already running?");
    return gp::cli::kExitFailure;
  }
  Log log;
  log.configure(args.common.verbose, args.common.quiet);
  const std::string run_id = gp::upload::random_uuid4();
  std::unique_ptr<gp::upload::RemoteLogs> remote;
  if (args.send_logs) remote = start_remote_logs(args, run_id, log);
  // Last: the records still queued are sent (at most 10 s) when gp-profile ends, however it ends.
  struct RemoteStop {
    Log& log;
    std::unique_ptr<gp::upload::RemoteLogs>& remote;
    ~RemoteStop() {
      log.attach_remote(nullptr);
      if (remote) remote->stop();
    }
  } remote_stop{log, remote};
  log.attach_remote(remote.get());
  if (!args.log_file.empty()) {
    if (auto opened =
            log.open_file(args.log_file, args.log_rotate_max_size, args.log_rotate_backup_count);
        !opened) {
      gp::cli::error(opened.error().message);
      return gp::cli::kExitFailure;
    }
  }
  auto tools = find_tools(o, log);
  if (!tools) {
    log.error(tools.error().message);
    return gp::cli::kExitFailure;
  }
  std::optional<gp::profile::PidFile> pid_file;
  if (!args.pid_file.empty()) {
    auto created = gp::profile::PidFile::create(args.pid_file);
    if (!created) {
      log.error(created.error().message);
      return gp::cli::kExitFailure;
    }
    pid_file.emplace(std::move(*created));
  }
  auto work_dir = make_work_dir();
  if (!work_dir) {
    log.error(work_dir.error().message);
    return gp::cli::kExitFailure;
  }
  const fs::path work = work_dir->path();
  install_signals();
  // The Java safemode state gp-runtime keeps between this run's sessions.
  if (gp::profile::runtimes_enabled(o)) {
    fs::path state = work / "java-safemode";
    std::error_code ec;
    if (fs::create_directory(state, ec)) args.options.java_safemode_state = state.string();
  }
  // gProfiler's kernel-log and process-exit checks of the JVMs gp-runtime profiles, for the
  // whole run (gp-runtime runs one process a session).
  std::optional<gp::runtime::JavaSafemodeWatch> safemode_watch;
  if (java_enabled(o) && !args.options.java_safemode_state.empty()) {
    auto causes = gp::runtime::java_safemode_causes(o.java_safemode);
    if (gp::runtime::JavaSafemodeWatch::needed(causes))
      safemode_watch.emplace(std::move(causes), args.options.java_safemode_state,
                             [&log](const std::string& line) { log.warning(line); });
  }
  const int64_t spawn_time = static_cast<int64_t>(::time(nullptr));
  if (o.upload) {
    Options& mo = args.options;
    if (mo.spool_dir.empty()) mo.spool_dir = (work / "spool").string();
    mo.gpid_file = (work / "gpid").string();          // a new agent gets a new gpid
    ::setenv("GPROFILER_TOKEN", o.token.c_str(), 1);  // children get it without argv
    if (auto healthy = studio_health_check(o, tools->upload, work, log); !healthy) {
      log.error(healthy.error().message);
      return gp::cli::kExitFailure;
    }
    log.info(1, "The connection to the server was successfully established (service '" +
                    o.service_name + "')");
  }
  json::Value agent = gp::profile::static_metadata(spawn_time, args.run_arguments);
  if (!o.external_metadata.empty()) {
    // gProfiler reads the static part once, and refuses to start on a stale file.
    auto age = gp::profile::file_age(o.external_metadata);
    if (age && *age > gp::profile::kExternalMetadataMaxAge) {
      log.error("external metadata file '" + o.external_metadata + "' was last modified " +
                std::to_string(age->count()) + " s ago, more than 5 minutes");
      return gp::cli::kExitFailure;
    }
    auto external = gp::fold::read_external_metadata(o.external_metadata);
    if (!external) {
      log.error(external.error().message);
      return gp::cli::kExitFailure;
    }
    agent.set("external_metadata", external->static_part);
  }
  PerfSpectRun perfspect;
  if (args.hw_metrics && !args.perfspect_path.empty()) start_perfspect(args, work, log, perfspect);
  std::unique_ptr<gp::profile::MetricsMonitor> metrics;
  if (o.collect_metrics) metrics = std::make_unique<gp::profile::MetricsMonitor>();
  std::string event = o.perf_event.empty() ? "cpu-clock" : o.perf_event;
  std::string rate = o.perf_event_period != 0
                         ? "every " + std::to_string(o.perf_event_period) + " " + event + " events"
                         : "at " + std::to_string(o.frequency) + " Hz" +
                               (o.perf_event.empty() ? "" : " of " + event);
  log.info(1, std::string("gp-profile ") + gp::kVersion + ": " + std::to_string(o.duration_s) +
                  " s sessions " + rate + (o.continuous ? ", continuous" : ""));
  if (!o.command.empty()) return profile_command(args, *tools, work, log, agent, metrics.get(), run_id);
  if (args.heartbeat_server) {
    auto sessions = [&](const Options& job, const std::atomic<bool>& stop) {
      return profile_loop(args, job, stop, *tools, work, log, agent, metrics.get(), run_id);
    };
    return heartbeat_loop(args, log, g_stop, sessions);
  }
  return profile_loop(args, o, g_stop, *tools, work, log, agent, metrics.get(), run_id);
}

}  // namespace gp::profile_tool
