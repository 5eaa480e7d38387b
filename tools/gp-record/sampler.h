#pragma once
// The sampling engines behind gp-record (async-profiler's "engine" idea): the eBPF sampler
// (sampler_bpf.cpp, in-kernel aggregation) and the perf_event ring-buffer sampler
// (sampler_perf.cpp, the fallback without BPF and the rootless mode). Both deliver the same
// things: process announcements, aggregated raw samples, and cumulative counters.

#include <signal.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gp/model/session.h"
#include "gp/record/assembler.h"
#include "gp/record/python_frames.h"
#include "gp/util/result.h"

namespace gp::record_tool {

class Unwinder;

inline constexpr size_t kMaxCgroups = 64;  // bpf/profile.h's GP_MAX_CGROUPS
// --unwind-copy-size's bounds: bpf/profile.h's GP_STACK_COPY_BYTES above; below, the red zone
// and a few frames.
inline constexpr uint32_t kMinUnwindCopySize = 512;
inline constexpr uint32_t kMaxUnwindCopySize = 16384;

struct SamplerConfig {
  std::string event = "cpu-clock";  // see parse_event()
  uint32_t frequency_hz = 11;
  uint64_t period = 0;              // events per sample; 0: frequency_hz
  double expected_rate = 11;        // samples per second per busy CPU, for sizing
  std::vector<int> cpus;            // empty: every online CPU
  std::vector<int32_t> pids, tids;  // empty: no filter
  std::vector<std::string>
      cgroups;  // at most kMaxCgroups cgroup v2 directories (tasks in any of them); none: all
  bool user_stacks = true;    // false with --kernel-only
  bool kernel_stacks = true;  // false with --user-only
  bool kernel_only = false;
  bool include_idle = false;
  uint32_t stack_storage_size = 16384;
  double flush_interval = 1.0;        // seconds between drains
  std::string stack_walker = "auto";  // auto, gp, kernel: see --stack-walker
  std::string unwind = "auto";        // fp, dwarf, auto: see --unwind
  uint32_t unwind_memory_mib = 16;    // --unwind-memory
  uint32_t unwind_copies = 1000;      // --unwind-copies
  uint32_t unwind_copy_size = 16384;  // --unwind-copy-size: bytes (bpf/profile.h's at most)
  bool python_frames = false;         // --python-frames
  bool python_versions = true;        // false: --no-python-versions
  // With --python-frames: the Python processes walked from their first sample (--pid's, or the
  // ones running when a whole-system recording starts); the others from their first sample's
  // announcement on.
  std::vector<int32_t> python_pids;
  std::string unwind_cache;           // --unwind-cache: a directory, or "" for none
  int verbose = 0;                    // libbpf messages at >= 2
  // Called with the unwinder (when there is one) before sampling starts: processes known in
  // advance (--pid, python_pids) get their tables before their first sample.
  std::function<void(Unwinder&)> before_sampling;
};

// A process the sampler saw for the first time, that exec'ed, or whose main thread exited; or
// (`mappings`) one whose sample met a file mapping its mappings read so far lack (a dlopen).
struct ProcessEvent {
  int32_t pid = 0;
  bool exec = false;
  bool exit = false;
  bool mappings = false;
};

using EventSink = std::function<void(const ProcessEvent&)>;
using SampleSink = std::function<void(const record::RawSample&)>;

// Unwind tables of the sampled processes (--unwind dwarf|auto with the BPF sampler): loaded when
// a process's mappings are read, dropped when it execs, exits or is forgotten.
class Unwinder {
 public:
  virtual ~Unwinder() = default;
  // Queues pid's tables for loading (the latest mappings read win); they are loaded in the
  // background.
  virtual void on_mappings(int32_t pid, const std::vector<model::Mapping>& mappings) = 0;
  // Returns once everything queued is loaded.
  virtual void wait_idle() = 0;
  // Drops pid's tables: at once after an exec (a new image; the sampler hears of its execs
  // itself, in order with its requests for mappings); a little later after its exit (`exited`),
  // for the stack copies its exit's samples still bring. A load of mappings read before its exit
  // still happens: its stack copies wait for those tables.
  virtual void forget(int32_t pid, bool exited) = 0;
  // pid is the command gp-record holds before its exec: while its mappings are gp-record's own
  // image, they are not loaded (a sample before its exec would have gp-record's binaries built
  // ahead of the command's own).
  virtual void skip_own_image(int32_t pid) = 0;
  // "unwind.tables.loaded", ... named as in the archive.
  virtual std::vector<model::Counter> counters() const = 0;
  // Binaries that got no table since the last call, and why (for -v).
  virtual std::vector<std::string> take_failures() = 0;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // "bpf" or "perf".
  virtual const char* name() const = 0;
  // Waits up to timeout_ms for process announcements and hands them to on_event. With
  // `wait_mask`, the signal mask is that during the wait only (as ppoll's): a caller that blocks
  // its stop signals, checks for them, then polls, cannot miss one that comes in between.
  virtual Status poll(int timeout_ms, const EventSink& on_event,
                      const sigset_t* wait_mask = nullptr) = 0;
  // Moves every sample taken since the previous drain to on_sample (announcements that are
  // still queued are delivered first). No sample is delivered twice or lost between drains.
  virtual Status drain(const EventSink& on_event, const SampleSink& on_sample) = 0;
  // Stops sampling, at the end of the last session: the next drain then holds every sample the
  // counters counted.
  virtual void stop() = 0;
  // Cumulative counters ("samples.lost", "stacks.collisions", ...), named as in the archive.
  virtual std::vector<model::Counter> counters() = 0;
  // The unwind tables, when this sampler unwinds with them; nullptr otherwise.
  virtual Unwinder* unwinder() { return nullptr; }
  // The CPython processes whose frames are walked (--python-frames with the BPF sampler);
  // nullptr otherwise.
  virtual record::PythonProcesses* python() { return nullptr; }
};

// An --event as perf_event_attr has it.
struct EventSpec {
  uint32_t type = 0;
  uint64_t config = 0, config1 = 0, config2 = 0;
  uint32_t precise_ip = 0;  // ":p" modifiers (0-3)
  bool exclude_user = false, exclude_kernel = false;
};
// --event's forms, as perf's -e spells them: a name of perf_event_names(); rHEX (a raw PMU event
// of the CPU); PMU/TERM=VALUE,.../ (a PMU of /sys/bus/event_source/devices: config, config1,
// config2, or its format's terms, such as event=0xc0,umask=1); any of them followed by
// perf's modifiers :p, :pp, :ppp (precise), :u (user only), :k (kernel only). The error says
// what is wrong in the text.
Result<EventSpec> parse_event(const std::string& event);
// The named events --event accepts (and completes).
const std::vector<std::string>& perf_event_names();

// Opens a perf event per CPU (or per thread for pid lists), loads and attaches; errors say what
// failed and why (errno text). `hint` receives a remedy line when one is known.
Result<std::unique_ptr<Sampler>> open_bpf_sampler(const SamplerConfig& config, std::string* hint);
Result<std::unique_ptr<Sampler>> open_perf_sampler(const SamplerConfig& config, std::string* hint);

// CPUs to sample: config.cpus or every online CPU.
std::vector<int> sampled_cpus(const SamplerConfig& config);

}  // namespace gp::record_tool
