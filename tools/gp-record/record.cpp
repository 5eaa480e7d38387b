// The recording loop: poll announcements, drain samples every flush interval into a chunk,
// finish each session with kallsyms and perf maps, stop cleanly on SIGINT/SIGTERM.
#include "record.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "gp/archive/writer.h"
#include "gp/cli/progress.h"
#include "gp/cli/tool.h"
#include "gp/proc/process.h"
#include "gp/record/assembler.h"
#include "gp/record/command.h"
#include "gp/record/summary.h"
#include "gp/record/target_watch.h"
#include "gp/runtime/discovery.h"
#include "gp/util/version.h"
#include "sampler.h"
#include "session_io.h"

namespace gp::record_tool {
namespace {

using Clock = std::chrono::steady_clock;
using gp::cli::kExitFailure;
using gp::cli::kExitOk;
using gp::record::kExitCannotRun;
using gp::cli::kExitUsage;

volatile sig_atomic_t g_signals = 0;
// SIGUSR2: end the current session now (as perf's --switch-output=signal); with -c the next one
// starts at once, with the same sampler, so no sample falls between the two.
volatile sig_atomic_t g_switch = 0;

// First SIGINT/SIGTERM: finish the session normally (with a command: pass it on, and finish when
// the command exits). Second: die by the signal (the archive keeps every chunk flushed so far).
void on_signal(int sig, siginfo_t* info, void*) {
  record::forward_to_command(sig, info);
  g_signals = g_signals + 1;
  if (g_signals >= 2) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void on_switch(int) { g_switch = 1; }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;  // no SA_RESTART: poll() returns at once
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_flags = 0;
  sa.sa_handler = on_switch;
  sigaction(SIGUSR2, &sa, nullptr);
}

// The processes whose Python frames are walked from their first sample: --pid's, or in a
// whole-system recording the Python processes running when it starts. Others are attached
// when their first sample announces them, which on a loaded host came a second or more after
// it (a Python process's first samples had only their native frames).
std::vector<int32_t> python_pids_at_start(const RecordArgs& args) {
  if (!args.pids.empty()) return args.pids;
  if (!args.tids.empty() || !args.cgroups.empty() || !args.command.empty()) return {};
  runtime::DiscoveryOptions options;
  options.runtimes = {runtime::Runtime::python};
  std::vector<int32_t> pids;
  for (const runtime::Target& t : runtime::ProcessWatcher(options).scan()) pids.push_back(t.pid);
  return pids;
}

Result<SamplerConfig> make_config(const RecordArgs& args) {
  SamplerConfig c;
  c.event = args.event;
  c.frequency_hz = args.frequency;
  c.period = args.period;
  c.expected_rate = expected_sample_rate(args);
  if (!args.cpus.empty() && !parse_cpu_list(args.cpus, &c.cpus))
    return make_error("invalid CPU list '" + args.cpus +
                      "': expected numbers and ranges such as 0,2-3");
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu : c.cpus)
    if (cpu >= ncpu)
      return make_error("invalid CPU list '" + args.cpus + "': cpu " + std::to_string(cpu) +
                        " does not exist");
  c.pids = args.pids;
  c.tids = args.tids;
  c.cgroups = args.cgroups;
  c.user_stacks = !args.kernel_only;
  c.kernel_stacks = !args.user_only;
  c.kernel_only = args.kernel_only;
  c.include_idle = args.include_idle;
  c.stack_storage_size = args.stack_storage_size;
  c.stack_walker = args.stack_walker;
  c.unwind = args.unwind;
  c.unwind_memory_mib = args.unwind_memory;
  c.unwind_copies = args.unwind_copies;
  c.unwind_copy_size = args.unwind_copy_size;
  c.python_frames = !args.python_frames.empty();
  c.python_versions = !args.no_python_versions;
  c.unwind_cache = args.unwind_cache == "none" ? "" : args.unwind_cache;
  // The processes of --pid have their unwind tables before the first sample, not a few
  // milliseconds after it.
  if (c.python_frames) c.python_pids = python_pids_at_start(args);
  std::vector<int32_t> known = args.pids;
  for (int32_t pid : c.python_pids)
    if (std::find(known.begin(), known.end(), pid) == known.end()) known.push_back(pid);
  c.before_sampling = [pids = std::move(known)](Unwinder& unwinder) {
    proc::SnapshotOptions options;
    proc::BuildIdCache cache;
    for (int32_t pid : pids)
      if (auto maps = proc::executable_mappings(pid, options, &cache))
        unwinder.on_mappings(pid, *maps);
  };
  c.flush_interval = flush_interval_seconds(args, sampled_cpus(c).size());
  c.verbose = args.common.verbose;
  return c;
}

// --sampler auto: BPF first; the perf sampler when BPF cannot be used (not root, no BPF).
// --python-frames needs the BPF program: without it, an error rather than stacks without them.
Result<std::unique_ptr<Sampler>> open_any_sampler(const RecordArgs& args,
                                                  const SamplerConfig& config, std::string* hint) {
  if (args.sampler == "perf")
    return config.python_frames
               ? make_error("--python-frames: Python frames are walked by the BPF sampler, not "
                            "--sampler perf")
               : open_perf_sampler(config, hint);
  auto bpf = open_bpf_sampler(config, hint);
  if (bpf) return bpf;
  std::string why = bpf.error().message;
  if (config.python_frames) return make_error("--python-frames: " + why);
  // The perf sampler follows no cgroup (--cgroup, and a command's own): the BPF sampler's reason
  // is the one to tell.
  if (args.sampler == "bpf" || !config.cgroups.empty()) return bpf;
  bool privileged = geteuid() == 0;
  gp::cli::info(privileged ? 0 : 1,
                "BPF sampler unavailable (" + why + "): using the perf sampler");
  hint->clear();
  auto perf = open_perf_sampler(config, hint);
  if (!perf && !privileged && hint->empty())
    *hint = "run as root for system-wide sampling, or use --pids of your own processes";
  return perf;
}

// --python-frames=auto (gp-profile's --python-mode auto): where the walk cannot run (the kernel,
// the stack walker, the sampler), one line says why and the recording goes on without it. Python
// processes then have native stacks only, and gp-profile's merge gives them the user-space
// sampler's instead.
Result<std::unique_ptr<Sampler>> open_sampler(const RecordArgs& args, const SamplerConfig& config,
                                              std::string* hint) {
  auto sampler = open_any_sampler(args, config, hint);
  if (sampler || args.python_frames != "auto") return sampler;
  gp::cli::info(0, sampler.error().message + ": recording without Python frames");
  hint->clear();
  SamplerConfig without = config;
  without.python_frames = false;
  return open_any_sampler(args, without, hint);
}

// The end-of-run line on Python frames (--python-frames): the share of Python processes' samples
// that got them, and why the others did not.
std::string python_summary(const std::vector<model::Counter>& counters) {
  auto get = [&](const std::string& name) -> int64_t {
    for (const auto& c : counters)
      if (c.name == name) return c.value;
    return 0;
  };
  const int64_t samples = get("python.samples"), walked = get("python.walked");
  char share[32];
  std::snprintf(
      share, sizeof(share), "%.1f%%",
      samples > 0 ? 100.0 * static_cast<double>(walked) / static_cast<double>(samples) : 0.0);
  return "python frames: " + std::to_string(get("python.processes")) + " processes (" +
         std::to_string(get("python.processes.refused")) + " not walked), " +
         std::to_string(walked) + " of " + std::to_string(samples) + " samples (" + share +
         ") with Python frames; without: " + std::to_string(get("python.no_thread")) +
         " no thread state, " + std::to_string(get("python.no_frame")) + " no frame, " +
         std::to_string(get("python.no_room")) + " no room; chains cut " +
         std::to_string(get("python.cut")) + ", unreadable " +
         std::to_string(get("python.read_errors"));
}

// The end-of-run line on user stacks unwound with tables: how many were whole, cut (and why),
// or walked with frame pointers before their process's tables were loaded.
std::string unwind_summary(const std::vector<model::Counter>& counters) {
  auto get = [&](const std::string& name) -> int64_t {
    for (const auto& c : counters)
      if (c.name == name) return c.value;
    return 0;
  };
  const int64_t complete = get("unwind.complete"), truncated = get("unwind.truncated");
  const int64_t before = get("unwind.before_tables"), unknown = get("unwind.unknown_end");
  const double all =
      static_cast<double>(std::max<int64_t>(1, complete + truncated + before + unknown));
  auto pct = [&](int64_t n) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.1f%%", 100.0 * static_cast<double>(n) / all);
    return std::string(b);
  };
  std::string why;
  for (auto [name, label] : {std::pair{"depth", "127 frames"},
                             {"read", "unreadable stack"},
                             {"no_rule", "no rule or frame pointer"},
                             {"unsupported", "unsupported CFI"},
                             {"bad_frame", "bad frame"}})
    if (int64_t n = get(std::string("unwind.truncated.") + name); n > 0)
      why += (why.empty() ? " (" : ", ") + std::string(label) + ": " + std::to_string(n);
  if (!why.empty()) why += ")";
  char mib[32];
  std::snprintf(mib, sizeof(mib), "%.1f MiB",
                static_cast<double>(get("unwind.tables.bytes")) / (1 << 20));
  const int64_t tables = get("unwind.tables.loaded");
  return "user stacks: " + pct(complete) + " whole, " + pct(truncated) + " truncated" + why + ", " +
         pct(unknown) + " ended by a zero frame pointer, " + pct(before) +
         " before their tables; " + std::to_string(tables) +
         (tables == 1 ? " unwind table (" : " unwind tables (") + mib + ")";
}

struct Totals {
  uint64_t samples = 0;
  uint64_t sessions = 0;
};

// What a session ends with besides its duration: the -p/-t targets' exit (looked for in /proc
// four times a second: cheaper than waking the sampler), or the command's (a waitpid).
struct Targets {
  std::function<bool()> alive;
  std::chrono::milliseconds every{250};
  bool signals_end = true;  // false with a command: a signal is passed on; its exit ends
};

// One recording session, written to `out` until `deadline` or a signal.
class SessionRecorder {
 public:
  SessionRecorder(const RecordArgs& args, double flush_interval, Sampler& sampler,
                  record::SessionAssembler& assembler, HostCaptures& captures, Totals& totals,
                  const Targets* targets)
      : args_(args),
        flush_interval_(flush_interval),
        shows_progress_(!args.common.quiet && gp::cli::is_terminal(STDERR_FILENO)),
        sampler_(sampler),
        assembler_(assembler),
        captures_(captures),
        totals_(totals),
        targets_(targets) {}

  // Returns an exit status; `out` gets a complete session unless writing failed.
  int record(archive::OutputStream& out, model::Header header, Clock::time_point deadline);
  // The session ended because every -p/-t target had exited.
  bool targets_exited() const { return targets_exited_; }

 private:
  Status flush(archive::Writer& writer);
  void on_process_event(const ProcessEvent& e);
  // When the assembler's next follow-up snapshot is due (steady_clock is CLOCK_MONOTONIC).
  Clock::time_point follow_up_time() const {
    int64_t ns = assembler_.next_follow_up_ns();
    return ns == std::numeric_limits<int64_t>::max()
               ? Clock::time_point::max()
               : Clock::time_point(std::chrono::nanoseconds(ns));
  }
  void set_counters();
  Status write_new_entries(archive::Writer& writer);
  void progress(Clock::time_point start, bool final);
  void report_counters();

  const RecordArgs& args_;
  const double flush_interval_;  // seconds
  const bool shows_progress_;    // stderr is a terminal and not --quiet: checked once, not per tick
  Sampler& sampler_;
  record::SessionAssembler& assembler_;
  HostCaptures& captures_;
  Totals& totals_;
  const Targets* targets_;  // null: the session does not end with its targets
  bool targets_exited_ = false;
  model::Session session_;
  uint64_t session_samples_ = 0;
  Clock::time_point deadline_ = Clock::time_point::max();
  EventSink on_event_ = [this](const ProcessEvent& e) { on_process_event(e); };
};

Status SessionRecorder::flush(archive::Writer& writer) {
  auto on_sample = [&](const record::RawSample& s) {
    assembler_.add(s);
    session_samples_ += s.count;
  };
  if (auto st = sampler_.drain(on_event_, on_sample); !st) return st;
  // JIT processes' perf maps while they live: one that exits before the session ends keeps its
  // names.
  CaptureNotes notes;
  captures_.copy_perf_maps(session_, assembler_, assembler_.jit_candidates(), notes);
  for (const auto& d : notes.details) gp::cli::info(1, d);
  set_counters();
  auto st = write_new_entries(writer);
  assembler_.end_drain();
  return st;
}

void SessionRecorder::on_process_event(const ProcessEvent& e) {
  // Its tables no longer apply (the kernel dropped them too). An exec the sampler's unwinder
  // hears of itself, in order with the new image's announcement: this event may come much later,
  // after the new image's tables were loaded.
  if (e.exit && sampler_.unwinder() != nullptr) sampler_.unwinder()->forget(e.pid, true);
  if (e.mappings) assembler_.on_mappings_changed(e.pid);
  else if (e.exit) assembler_.on_process_exit(e.pid);
  else assembler_.on_process_event(e.pid, e.exec);
}

void SessionRecorder::set_counters() {
  for (const auto& c : sampler_.counters()) session_.set_counter(c.name, c.value);
  if (Unwinder* u = sampler_.unwinder())
    for (const auto& why : u->take_failures()) gp::cli::info(2, "no unwind table for " + why);
  session_.set_counter("processes.snapshots", static_cast<int64_t>(assembler_.snapshots()));
  session_.set_counter("mappings.resnapshots", static_cast<int64_t>(assembler_.resnapshots()));
  session_.set_counter("mappings.follow_ups",
                       static_cast<int64_t>(assembler_.follow_up_snapshots()));
  session_.set_counter("processes.forgotten", static_cast<int64_t>(assembler_.forgotten()));
  session_.set_counter("interning.restarts", static_cast<int64_t>(assembler_.interning_restarts()));
  if (sampler_.python() != nullptr) {
    const auto& py = assembler_.python_stats();
    session_.set_counter("python.stacks.spliced", static_cast<int64_t>(py.spliced));
    session_.set_counter("python.stacks.unspliced", static_cast<int64_t>(py.unspliced));
  }
}

// What was written is not kept: memory follows what live processes use, not the session's length.
Status SessionRecorder::write_new_entries(archive::Writer& writer) {
  archive::ChunkDelta delta;
  delta.base = assembler_.take_entries(delta.entries);
  delta.entries.counters = session_.counters;
  return writer.write_delta(delta);
}

void SessionRecorder::progress(Clock::time_point start, bool final) {
  if (!shows_progress_) return;
  if (final) {
    gp::cli::clear_progress();  // the session's summary lines follow
    return;
  }
  // Whole seconds passed (never "4s of 3.5s"), and the duration as given ("of 3.5s").
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
  char of[32] = "";
  if (deadline_ != Clock::time_point::max())
    std::snprintf(of, sizeof of, " of %gs",  // to a tenth: the deadline was set just before start
                  std::round(std::chrono::duration<double>(deadline_ - start).count() * 10) / 10);
  gp::cli::show_progress(std::to_string(elapsed) + "s" + of + ", " +
                         std::to_string(session_samples_) + " samples, " +
                         std::to_string(assembler_.sampled_process_count()) + " processes");
}

void SessionRecorder::report_counters() {
  auto warn = [](int64_t n, const std::string& what, const std::string& remedy) {
    if (n > 0) gp::cli::warning(std::to_string(n) + " " + what + ": " + remedy);
  };
  warn(session_.counter("stacks.errors"), "stacks lost (stack map full)",
       "raise --stack-storage-size or lower --flush-interval");
  warn(session_.counter("stacks.collisions"), "stacks lost to stack hash collisions",
       "please report it");
  warn(session_.counter("maps.full"), "samples dropped (sample map full)",
       "raise --stack-storage-size or lower --flush-interval");
  warn(session_.counter("events.lost"), "process announcements lost",
       "some processes may lack metadata");
  warn(session_.counter("samples.lost"), "samples lost by the kernel (perf ring full)", "lower -F");
}

int SessionRecorder::record(archive::OutputStream& out, model::Header header,
                            Clock::time_point deadline) {
  session_.header = std::move(header);
  deadline_ = deadline;
  assembler_.begin_session(session_);
  captures_.begin_session();
  archive::Writer writer(out, archive::WriterOptions{512u << 10, "gp-record", kVersion});
  if (auto st = writer.begin_session(session_); !st) {
    gp::cli::error(st.error().message);
    return kExitFailure;
  }
  auto start = Clock::now();
  auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flush_interval_));
  const auto one_second = std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1));
  // The first chunk goes out within a second whatever the interval: a reader of the output sees
  // the session begin, and an output that cannot be written shows at once.
  auto next_flush = start + std::min(interval, one_second);
  // With the default (long at low frequencies) interval, a process snapshotted since the last
  // flush gets a drain within a second, as with 1-s flushes: it may run JIT code or dlopen a
  // library after its snapshot and exit before a later drain could look at its mappings again.
  const bool early_drains = args_.flush_interval <= 0 && interval > one_second;
  auto early_flush = Clock::time_point::max();
  // On a terminal the progress line moves every second, between flushes too (with the samples
  // drained so far); elsewhere the recorder never wakes for it.
  auto next_tick = shows_progress_ ? start + one_second : Clock::time_point::max();
  const auto target_check = std::chrono::duration_cast<Clock::duration>(
      targets_ ? targets_->every : std::chrono::milliseconds(250));
  const bool signals_end = targets_ == nullptr || targets_->signals_end;
  auto next_target_check = targets_ ? start + target_check : Clock::time_point::max();
  // The stop signals are blocked from the check of g_signals until the wait, which unblocks
  // them: one that comes in between ends the wait at once. The recorder wakes only for a flush,
  // a follow-up, an announcement or (on a terminal) the progress line.
  sigset_t stops = gp::cli::stop_signals();
  sigaddset(&stops, SIGUSR2);
  sigset_t wait_mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &wait_mask);
  sigdelset(&wait_mask, SIGINT);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGUSR2);
  for (;;) {
    pthread_sigmask(SIG_BLOCK, &stops, nullptr);
    if ((g_signals != 0 && signals_end) || g_switch != 0 || targets_exited_ ||
        Clock::now() >= deadline) {
      pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
      break;
    }
    auto wake = std::min(
        {next_flush, early_flush, deadline, follow_up_time(), next_tick, next_target_check});
    const uint64_t snapshots_before = assembler_.snapshots();
    // Rounded up: a wait truncated to 0 ms would spin through the last millisecond.
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count();
    auto polled = sampler_.poll(
        static_cast<int>(std::clamp<int64_t>(wait, 0, std::numeric_limits<int>::max())), on_event_,
        &wait_mask);
    pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
    if (!polled) {
      gp::cli::error(polled.error().message);
      return kExitFailure;
    }
    assembler_.follow_up(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count());
    const auto now = Clock::now();
    if (now >= next_target_check) {
      targets_exited_ = !targets_->alive();
      next_target_check = now + target_check;
    }
    if (early_drains && assembler_.snapshots() != snapshots_before)
      early_flush = std::min(early_flush, now + one_second);
    if (now >= next_flush || now >= early_flush) {
      if (auto st = flush(writer); !st) {
        gp::cli::error(st.error().message);
        return kExitFailure;
      }
      // Counted from this flush, early or not: a regular one right after an early one would
      // carry almost nothing.
      next_flush = now + interval;
      early_flush = Clock::time_point::max();
      progress(start, false);
    } else if (now >= next_tick) {
      progress(start, false);
    }
    while (next_tick <= now) next_tick += one_second;
  }
  // A switch is taken by the session it ended; one that comes later ends the next session (at
  // once, if it comes before that session began).
  g_switch = 0;
  // The last session: stop sampling first, so its final drain holds every sample counted.
  if (!args_.continuous || g_signals != 0) sampler_.stop();
  if (auto st = flush(writer); !st) {
    gp::cli::error(st.error().message);
    return kExitFailure;
  }
  CaptureNotes notes = captures_.capture(session_, assembler_);
  for (const auto& w : notes.warnings) gp::cli::warning(w);
  for (const auto& d : notes.details) gp::cli::info(1, d);
  model::Trailer trailer;
  trailer.counters = session_.counters;
  auto written = write_new_entries(writer);
  if (written) written = writer.end_deltas(std::move(trailer), true);
  if (!written) {
    gp::cli::error(written.error().message);
    return kExitFailure;
  }
  progress(start, true);
  report_counters();
  std::string counters;
  for (const auto& c : session_.counters) counters += " " + c.name + "=" + std::to_string(c.value);
  gp::cli::info(1, "session counters:" + counters);
  totals_.samples += session_samples_;
  ++totals_.sessions;
  return kExitOk;
}

// Where sessions go: one stream, or a file per session in --output-dir.
class Output {
 public:
  Output(const RecordArgs& args, std::string host) : args_(args), host_(std::move(host)) {}
  Result<archive::OutputStream*> next();
  Status finish_session();
  std::string last_name() const { return name_; }

 private:
  const RecordArgs& args_;
  std::string host_;
  std::unique_ptr<archive::OutputStream> stream_;
  std::string name_, previous_;
};

Result<archive::OutputStream*> Output::next() {
  if (args_.output_dir.empty() && stream_) return stream_.get();  // sessions follow each other
  name_ = args_.output_dir.empty()
              ? (args_.output.empty() ? "-" : expand_output_name(args_.output, host_))
              : session_file_name(args_.output_dir, host_);
  auto s = archive::OutputStream::open(name_, !args_.no_compress);
  if (!s) return s.error();
  stream_ = std::move(*s);
  return stream_.get();
}

Status Output::finish_session() {
  if (args_.output_dir.empty()) return stream_->flush();
  auto st = stream_->close();
  if (!st) return st;
  update_last_link(args_.output_dir, name_);
  if (args_.rotating_output && !previous_.empty()) unlink(previous_.c_str());
  previous_ = name_;
  return ok_status();
}

// What -p, -t and --cgroup name must exist before anything is opened or written: the error is
// then about the target, not about a sampler that could not follow it.
int check_targets(const RecordArgs& args) {
  for (int32_t pid : args.pids) {
    if (!proc::process_alive(pid)) {
      gp::cli::error("process " + std::to_string(pid) + ": no such process");
      return kExitFailure;
    }
  }
  for (int32_t tid : args.tids) {
    // /proc/TID is there for every thread (hidden from listings, not from lookups).
    if (!proc::process_alive(tid)) {
      gp::cli::error("thread " + std::to_string(tid) + ": no such thread");
      return kExitFailure;
    }
  }
  if (args.cgroups.size() > kMaxCgroups) {
    gp::cli::error("at most " + std::to_string(kMaxCgroups) + " --cgroup directories");
    return kExitUsage;
  }
  for (const std::string& cgroup : args.cgroups) {
    struct stat st {};
    if (::stat(cgroup.c_str(), &st) != 0) {
      gp::cli::error("no such cgroup '" + cgroup + "': " + std::strerror(errno));
      gp::cli::hint("give a cgroup v2 directory, e.g. '/sys/fs/cgroup/system.slice/nginx.service'");
      return kExitFailure;
    }
    if (!S_ISDIR(st.st_mode)) {
      gp::cli::error("no such cgroup '" + cgroup + "': not a directory");
      return kExitFailure;
    }
  }
  return kExitOk;
}

int check_output(const RecordArgs& args) {
  bool to_stdout = args.output_dir.empty() && (args.output.empty() || args.output == "-");
  if (to_stdout && gp::cli::is_terminal(STDOUT_FILENO)) {
    gp::cli::error("refusing to write a binary archive to a terminal");
    gp::cli::hint("use -o FILE, or redirect standard output ('gp-record > run.gpa')");
    return kExitUsage;
  }
  if (!args.output_dir.empty() && !args.output.empty()) {
    gp::cli::error("--output and --output-dir cannot be used together");
    return kExitUsage;
  }
  if (!args.output_dir.empty() && mkdir(args.output_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    gp::cli::error("cannot create directory '" + args.output_dir + "': " + std::strerror(errno));
    return kExitFailure;
  }
  return kExitOk;
}

// `gp-record -- COMMAND`: what a command cannot be combined with, and the archive it defaults to.
int check_command_args(RecordArgs& args) {
  if (args.command.empty()) return kExitOk;
  if (!args.pids.empty() || !args.tids.empty() || !args.cgroups.empty() || args.continuous) {
    gp::cli::error("a command cannot be combined with -p, -t, --cgroup or -c");
    return kExitUsage;
  }
  if (args.output == "-") {
    gp::cli::error("with a command the archive cannot go to standard output: it is the command's");
    gp::cli::hint("use -o FILE (default: " + std::string(kCommandOutput) + ")");
    return kExitUsage;
  }
  if (args.output.empty()) args.output = kCommandOutput;
  return kExitOk;
}

// Starts the command held before exec and points the recording at its cgroup (at its pid alone
// when no cgroup can be made).
Result<record::RecordedCommand> start_command(RecordArgs& args) {
  auto command = record::RecordedCommand::start(args.command);
  if (!command) return command.error();
  if (!command->cgroup().empty()) {
    args.cgroups = {command->cgroup()};
  } else {
    args.pids = {command->pid()};
    gp::cli::warning("only the command's own process is recorded, not the processes it starts (" +
                     command->no_cgroup_reason() + ")");
  }
  return command;
}

// After a recording to a file on a terminal: the hottest functions.
void show_top_functions(const RecordArgs& args, const std::string& path) {
  if (args.common.quiet || !args.output_dir.empty() || path == "-" ||
      !gp::cli::is_terminal(STDERR_FILENO))
    return;
  std::ostringstream table;
  if (auto st = record::write_top_functions(path, 10, table); !st) {
    gp::cli::warning("no summary: " + st.error().message);
    return;
  }
  if (!table.str().empty())
    std::cerr << "\nhottest functions (gp-symbolize " << path << " | gp-fold --top 10):\n"
              << table.str() << std::flush;
}

}  // namespace

int run(const RecordArgs& args_in, const std::vector<std::string>& argv) {
  RecordArgs args = args_in;
  if (int st = check_command_args(args); st != kExitOk) return st;
  auto config = make_config(args);
  if (!config) {
    gp::cli::error(config.error().message);
    return kExitUsage;
  }
  if (int st = check_targets(args); st != kExitOk) return st;
  if (int st = check_output(args); st != kExitOk) return st;
  install_signal_handlers();
  // The command waits before its exec until the sampler is attached.
  std::optional<record::RecordedCommand> command;
  if (!args.command.empty()) {
    auto started = start_command(args);
    if (!started) {
      gp::cli::error(started.error().message);
      return kExitCannotRun;
    }
    command.emplace(std::move(*started));
    config = make_config(args);  // its cgroup or pid
    if (!config) {
      gp::cli::error(config.error().message);
      return kExitFailure;
    }
    // The held process is gp-record's image until its exec, not the command's.
    config->before_sampling = [pid = command->pid()](Unwinder& unwinder) {
      unwinder.skip_own_image(pid);
    };
  }
  model::HostInfo host = proc::host_info();
  // The sampler first: a run that cannot sample leaves no empty output file behind (nor
  // truncates the one it would have replaced).
  std::string hint;
  auto sampler = open_sampler(args, *config, &hint);
  if (!sampler) {
    gp::cli::error(sampler.error().message);
    if (!hint.empty()) gp::cli::hint(hint);
    return kExitFailure;
  }
  if (command) {
    if (auto st = command->release(); !st) {
      gp::cli::error(st.error().message);
      return kExitCannotRun;
    }
  }
  Output output(args, host.hostname);
  auto first_out = output.next();  // an unwritable output fails before the first drain
  if (!first_out) {
    gp::cli::error(first_out.error().message);
    return kExitFailure;
  }
  std::ostringstream sampling;
  sampling << "sampling with the " << (*sampler)->name() << " sampler ";
  if (args.period > 0) sampling << "every " << args.period << " " << args.event << " events";
  else sampling << "at " << args.frequency << " Hz";
  sampling << ", flushing every " << std::setprecision(3) << config->flush_interval << " s";
  gp::cli::info(1, sampling.str());
  record::PerfMapTails perf_maps;
  LiveProcessSource source(args.redact_cmdline, perf_maps, (*sampler)->unwinder());
  record::SessionAssembler assembler(source, host.kernel_build_id);
  assembler.set_python((*sampler)->python());
  HostCaptures captures(perf_maps);
  Totals totals;
  double duration = args.duration > 0 ? args.duration : (args.continuous ? 60.0 : 0.0);
  // As perf record -p: a recording of given processes or threads ends once all have exited. A
  // continuous one goes on (its controller decides; gp-profile keeps it across sessions). A
  // command's ends when it exits.
  std::optional<record::TargetWatch> watch;
  std::optional<Targets> targets;
  if (command) {
    targets.emplace(Targets{[&] { return !command->exited(); }, std::chrono::milliseconds(50), false});
  } else if (!args.continuous && (!args.pids.empty() || !args.tids.empty())) {
    std::vector<int32_t> ids = args.pids;
    ids.insert(ids.end(), args.tids.begin(), args.tids.end());
    watch.emplace(ids);
    targets.emplace(Targets{[&] { return watch->any_alive(); }});
  }
  bool first = true;
  do {
    auto out = first ? std::move(first_out) : output.next();
    first = false;
    if (!out) {
      gp::cli::error(out.error().message);
      return kExitFailure;
    }
    auto deadline = duration > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                      std::chrono::duration<double>(duration))
                                 : Clock::time_point::max();
    SessionRecorder recorder(args, config->flush_interval, **sampler, assembler, captures, totals,
                             targets ? &*targets : nullptr);
    int st = recorder.record(**out, make_header(args, argv, host, (*sampler)->name(), duration),
                             deadline);
    if (st != kExitOk) return st;
    if (recorder.targets_exited() && !command)
      gp::cli::info(0, "every process and thread given with -p/-t has exited: recording ended");
    if (auto fin = output.finish_session(); !fin) {
      gp::cli::error(fin.error().message);
      return kExitFailure;
    }
  } while (args.continuous && g_signals == 0);
  gp::cli::info(0, "recorded " + std::to_string(totals.samples) + " samples in " +
                       std::to_string(totals.sessions) +
                       (totals.sessions == 1 ? " session" : " sessions") + " (" +
                       (*sampler)->name() + " sampler)" +
                       (output.last_name() != "-" ? " to " + output.last_name() : ""));
  if ((*sampler)->unwinder() != nullptr) gp::cli::info(0, unwind_summary((*sampler)->counters()));
  if ((*sampler)->python() != nullptr) gp::cli::info(0, python_summary((*sampler)->counters()));
  show_top_functions(args, output.last_name());
  if (!command) return kExitOk;
  // -d ended the recording: the command still runs, and gp-record still exits with its status.
  command->wait();
  return command->exit_code();
}

}  // namespace gp::record_tool
