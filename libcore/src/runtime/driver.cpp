// gp-runtime's session driver (gp/runtime/driver.h).
#include "gp/runtime/driver.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <thread>

#include "gp/model/builder.h"
#include "gp/proc/process.h"
#include "gp/runtime/appid.h"
#include "gp/runtime/work_dir.h"
#include "gp/util/json.h"
#include "runtime/java/target_dir.h"
#include "runtime/python/package_versions.h"
#include "runtime/target_selection.h"

namespace gp::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A session without -d runs until stopped; adapters still want a finite duration.
constexpr milliseconds kUnbounded = std::chrono::hours(24 * 365);

// Shared between the driver and a target's threads. The threads write `profile` / `metadata`
// and then set the done flags (release); the driver reads them only after seeing the flags.
struct Slot {
  Target target;
  model::Process process;
  TargetReport report;
  std::unique_ptr<Adapter> adapter;
  SessionParams params;
  Profile profile;
  std::string metadata;
  std::atomic<bool> profile_done{false};
  std::atomic<bool> metadata_done{false};
  bool finish_reported = false;
  std::jthread profiler;
  std::jthread metadata_worker;
};
using SlotPtr = std::shared_ptr<Slot>;

model::Process process_entry(const Target& t, const DriverOptions& o) {
  proc::SnapshotOptions snap_options;
  snap_options.proc_root = o.proc_root;
  auto snap = proc::snapshot_process(t.pid, snap_options);
  model::Process p = snap ? std::move(*snap) : model::Process{};
  p.pid = t.pid;
  if (p.comm.empty()) p.comm = t.comm;
  if (p.exe.empty()) p.exe = t.exe;
  if (p.cmdline.empty()) p.cmdline = t.cmdline;
  p.runtime = std::string(runtime_name(t.runtime));
  if (o.app_ids) p.appid = app_id(t, o.app_id_args_filters, o.java_spark_app_name).value_or("");
  return p;
}

void run_profiler_thread(const SlotPtr& s, std::stop_token stop) {
  Profile p;
  try {
    p = s->adapter->profile(s->target, s->params, stop);
  } catch (const std::exception& e) {
    p.error_frame = error_frame(std::string("exception ") + e.what());
  } catch (...) {
    p.error_frame = error_frame("exception (unknown)");
  }
  // While the process still runs: its files are read through /proc/PID/root.
  if (s->params.python_versions && s->target.runtime == Runtime::python && !p.stacks.empty())
    python::add_package_versions(s->target, p);
  if (s->params.thread_names && s->target.runtime == Runtime::java) add_thread_frames(p);
  s->profile = std::move(p);
  s->profile_done.store(true, std::memory_order_release);
}

// Starts a target: picks its adapter, or records why none runs.
SlotPtr launch(Target t, const DriverOptions& o, const WorkDir& work, Clock::time_point end) {
  auto s = std::make_shared<Slot>();
  s->process = process_entry(t, o);
  s->report.pid = t.pid;
  s->report.comm = s->process.comm;
  s->report.runtime = t.runtime;
  s->report.appid = s->process.appid;
  auto mode = o.modes.find(t.runtime);
  AdapterChoice choice =
      choose_adapter(t.runtime, mode == o.modes.end() ? "disabled" : mode->second, o.adapters);
  s->report.mode = choice.mode;
  s->target = std::move(t);
  if (o.app_metadata) {
    s->metadata_worker = std::jthread([s] {
      s->metadata = app_metadata_json(s->target, true);
      s->metadata_done.store(true, std::memory_order_release);
    });
  }
  if (!choice.adapter) {
    s->profile.error_frame = skip_frame(choice.skip_reason);
    s->profile_done.store(true, std::memory_order_release);
    return s;
  }
  s->adapter = std::move(choice.adapter);
  s->report.adapter = std::string(s->adapter->name());
  auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now());
  s->params.frequency_hz = o.frequency_hz;
  s->params.duration =
      end == Clock::time_point::max() ? kUnbounded : std::max(left, milliseconds(0));
  s->params.mode = choice.mode;
  s->params.python_versions = o.python_versions;
  s->params.async_profiler = o.async_profiler;
  s->params.alloc_interval = o.alloc_interval;
  s->params.attach_timeout = o.java_attach_timeout;
  s->params.method_modifiers = o.java_method_modifiers;
  s->params.line_numbers = o.java_line_numbers;
  s->params.thread_names = o.java_thread_names;
  s->params.jvm_flags = o.java_jvm_flags;
  s->params.java_version_check = o.java_version_check;
  s->params.java_safemode = o.java_safemode;
  s->params.java_full_hserr = o.java_full_hserr;
  s->params.java_safemode_state = o.java_safemode_state;
  s->params.work_dir = work.subdir(std::to_string(s->target.pid));
  s->profiler = std::jthread([s](std::stop_token stop) { run_profiler_thread(s, stop); });
  return s;
}

// Fills the report from a finished profile and tells the caller, once.
void finish(Slot& s, const DriverOptions& o) {
  if (s.finish_reported || !s.profile_done.load(std::memory_order_acquire)) return;
  s.finish_reported = true;
  if (s.profiler.joinable()) s.profiler.join();
  uint64_t samples = 0;
  for (const auto& st : s.profile.stacks) samples += st.count;
  s.report.samples = samples;
  s.report.warnings = s.profile.warnings;
  if (samples > 0 && !s.profile.error_frame.empty()) {
    s.report.warnings.push_back("kept the samples collected before: " + s.profile.error_frame);
  } else if (samples == 0) {
    s.report.error_frame = s.profile.error_frame;
  }
  if (o.on_finish) o.on_finish(s.report);
}

// "15", "0.3": seconds as a user would write them.
std::string seconds_text(milliseconds ms) {
  std::string s = std::to_string(ms.count() / 1000);
  if (ms.count() % 1000 != 0) s += "." + std::to_string(ms.count() % 1000 / 100);
  return s;
}

bool all_done(const std::vector<SlotPtr>& slots) {
  for (const auto& s : slots) {
    if (!s->profile_done.load(std::memory_order_acquire)) return false;
    if (s->metadata_worker.joinable() && !s->metadata_done.load(std::memory_order_acquire))
      return false;
  }
  return true;
}

// Ends every target: asks the profilers to stop, waits up to `grace`, abandons the rest.
bool wind_down(std::vector<SlotPtr>& slots, const DriverOptions& o) {
  for (auto& s : slots) {
    if (s->profiler.joinable()) s->profiler.request_stop();
  }
  const auto deadline = Clock::now() + o.grace;
  while (!all_done(slots) && Clock::now() < deadline) {
    for (auto& s : slots) finish(*s, o);
    std::this_thread::sleep_for(milliseconds(20));
  }
  bool abandoned = false;
  for (auto& s : slots) {
    if (!s->profile_done.load(std::memory_order_acquire)) {
      s->profiler.detach();  // it keeps its own reference to the slot
      s->report.hung = true;
      s->report.error_frame = error_frame(s->report.adapter + " did not return within " +
                                          seconds_text(o.grace) + " s after the session ended");
      s->finish_reported = true;
      if (o.on_finish) o.on_finish(s->report);
      abandoned = true;
      continue;
    }
    finish(*s, o);
    if (s->metadata_worker.joinable()) {
      if (s->metadata_done.load(std::memory_order_acquire)) {
        s->metadata_worker.join();
      } else {
        s->metadata_worker.detach();
        abandoned = true;
      }
    }
  }
  return abandoned;
}

// A process in its exit counts as gone: a profiler that saw it go down (its memory released)
// ends a --pids session at once, before the exit has made it a zombie.
bool still_running(const Target& t, const std::string& proc_root) {
  auto st = read_stat(t.pid, proc_root);
  return st && !st->exiting && st->state != 'Z' && st->state != 'X';
}

model::Header make_header(const DriverOptions& o) {
  model::Header h;
  h.source = model::SourceKind::runtime;
  model::start_session_now(h);
  h.host = proc::host_info();
  h.sampling.event = "cpu";
  h.sampling.frequency_hz = static_cast<uint32_t>(o.frequency_hz);
  h.sampling.mode = "runtime";
  if (o.alloc_interval > 0) {  // counts are bytes: one sample per alloc_interval bytes
    h.sampling.event = "alloc";
    h.sampling.frequency_hz = 0;
    h.sampling.period = o.alloc_interval;
  }
  json::Value modes = json::Value::object();
  for (Runtime r : all_runtimes()) {
    auto it = o.modes.find(r);
    modes.set(runtime_modes(r).option,
              json::Value::from_string(it == o.modes.end() ? "disabled" : it->second));
  }
  json::Value meta = json::Value::object();
  meta.set("runtime_modes", std::move(modes));
  if (o.alloc_interval > 0) meta.set("profiling_mode", json::Value::from_string("allocation"));
  h.metadata_json = json::dump(meta);
  return h;
}

void build_session(DriverResult& result, std::vector<SlotPtr>& slots, const DriverOptions& o) {
  std::stable_sort(slots.begin(), slots.end(), [](const SlotPtr& a, const SlotPtr& b) {
    return a->target.pid < b->target.pid;
  });
  model::SessionBuilder b(result.session);
  for (auto& s : slots) {
    model::Process p = s->process;
    if (s->metadata_done.load(std::memory_order_acquire))
      p.app_metadata_json = add_app_metadata(s->metadata, s->profile.app_metadata_json);
    p.exited = !still_running(s->target, o.proc_root);
    s->report.exited = p.exited;
    Profile hung;
    hung.error_frame = s->report.error_frame;
    add_profile(b, std::move(p), s->report.hung ? hung : s->profile);
    result.targets.push_back(s->report);
  }
}

std::set<Runtime> enabled_runtimes(const DriverOptions& o) {
  std::set<Runtime> out;
  for (const auto& [r, mode] : o.modes) {
    if (mode != "disabled") out.insert(r);
  }
  return out;
}

}  // namespace

Result<DriverResult> run_session(const DriverOptions& o, std::stop_token stop) {
  auto work = WorkDir::create(o.tmp_dir);
  if (!work) return work.error();
  DriverResult result;
  result.work_dir = work->path();
  result.session.header = make_header(o);
  const auto start = Clock::now();
  const auto end = o.duration ? start + *o.duration : Clock::time_point::max();
  DiscoveryOptions discovery;
  discovery.proc_root = o.proc_root;
  discovery.runtimes = enabled_runtimes(o);
  discovery.php_proc_filter = o.php_proc_filter;
  discovery.python_pids = o.python_pids;
  if (discovery.runtimes.count(Runtime::java) != 0) {
    // JVM directories that killed runs left in this namespace's /tmp, whether or not their
    // JVM still runs (those in other namespaces go when their JVM is profiled again).
    int tmp = ::open((o.proc_root + "/self/root/tmp").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (tmp >= 0) {
      java::TargetDir::remove_stale(tmp, o.proc_root);
      ::close(tmp);
    }
  }
  ProcessWatcher watcher(discovery, o.pids);
  const detail::SelectionLimits limits{o.min_age, o.max_per_runtime, o.proc_root};
  std::map<Runtime, size_t> profiled;  // per runtime, for max_per_runtime
  std::vector<SlotPtr> slots;
  auto next_scan = start;
  bool first = true;
  while (!stop.stop_requested() && Clock::now() < end) {
    if (Clock::now() >= next_scan && (first || (o.profile_spawned && o.pids.empty()))) {
      std::vector<detail::LeftOut> left_out;
      auto chosen = detail::select_targets(watcher.scan(), limits, profiled, left_out);
      for (const detail::LeftOut& l : left_out) {
        ++result.left_out;
        if (o.on_left_out) o.on_left_out(l.target, l.why);
      }
      for (Target& t : chosen) {
        slots.push_back(launch(std::move(t), o, *work, end));
        if (o.on_start) o.on_start(slots.back()->report);
      }
      if (first) result.rejected = watcher.rejected();
      first = false;
      next_scan = Clock::now() + o.rescan_interval;
    }
    for (auto& s : slots) finish(*s, o);
    // With --pids, nothing new can come: end once every target is done.
    if (!o.pids.empty() && all_done(slots)) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  result.stopped = stop.stop_requested() && Clock::now() < end;
  result.abandoned_threads = wind_down(slots, o);
  result.session.header.sampling.duration_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  build_session(result, slots, o);
  return result;
}

}  // namespace gp::runtime
