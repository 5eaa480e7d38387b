// The eBPF sampler: bpf/profile.bpf.c on a perf event per CPU, counts aggregated in the kernel
// and drained by flipping between two map slots (see the comment at the top of profile.bpf.c).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "gp/cli/tool.h"
#include "gp/record/deferred_stacks.h"
#include "gp/record/stack_copies.h"
#include "perf_events.h"
#include "profile.skel.h"
#include "python_maps.h"
#include "sampler.h"
#include "unwind_announcer.h"
#include "unwind_maps.h"

extern "C" {
#include "profile.h"
}

static_assert(sizeof(gp_sample_key) == 48, "bpf/profile.h: gp_sample_key layout");
static_assert(sizeof(gp_stack) == 8 + 8 * GP_MAX_STACK_DEPTH, "bpf/profile.h: gp_stack layout");
static_assert(static_cast<int>(gp::model::StackEnd::complete) == GP_STACK_END_COMPLETE &&
                  static_cast<int>(gp::model::StackEnd::truncated) == GP_STACK_END_TRUNCATED,
              "bpf/profile.h: gp_stack_end matches model::StackEnd");
static_assert(sizeof(gp_event) == 40, "bpf/profile.h: gp_event layout");
static_assert(offsetof(gp_new_stack, stack) == 16 && offsetof(gp_stack, ips) == 8,
              "bpf/profile.h: gp_new_stack layout");
static_assert(sizeof(gp_cpu_state) % 8 == 0, "bpf/profile.h: per-CPU values are 8-byte multiples");
static_assert(sizeof(gp_tally) == 64, "bpf/profile.h: gp_tally layout (one cache line)");
static_assert(gp::record_tool::kMaxCgroups == GP_MAX_CGROUPS, "bpf/profile.h: GP_MAX_CGROUPS");
static_assert(gp::record_tool::kMaxUnwindCopySize == GP_STACK_COPY_BYTES,
              "sampler.h: --unwind-copy-size's bound");
static_assert(offsetof(gp_stack_copy, bytes) == GP_STACK_COPY_HEADER,
              "bpf/profile.h: gp_stack_copy layout");

namespace gp::record_tool {
namespace {

int libbpf_verbosity = 0;

int print_libbpf(enum libbpf_print_level level, const char* format, va_list args) {
  // libbpf is chatty (every relocation at debug level): silent below -vv (STYLE.md §F).
  if (libbpf_verbosity < 2 || (level == LIBBPF_DEBUG && libbpf_verbosity < 3)) return 0;
  // Whole: a verifier's log is one message of up to megabytes, and its end says what failed.
  va_list measure;
  va_copy(measure, args);
  int length = vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (length <= 0) return 0;
  std::string text(static_cast<size_t>(length) + 1, '\0');
  vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<size_t>(length));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  gp::cli::info(2, "libbpf: " + text);
  return 0;
}

struct SkelDeleter {
  void operator()(profile_bpf* s) const { profile_bpf__destroy(s); }
};
struct LinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};
struct RingDeleter {
  void operator()(ring_buffer* r) const { ring_buffer__free(r); }
};

// A slot's tally, mapped read-only: the drain reads the counts where the BPF program wrote them.
class TallyView {
 public:
  TallyView() = default;
  ~TallyView() {
    if (entries_ != nullptr) munmap(const_cast<gp_tally*>(entries_), bytes_);
  }
  TallyView(const TallyView&) = delete;
  TallyView& operator=(const TallyView&) = delete;
  bool map(int fd, size_t entries) {
    bytes_ = entries * sizeof(gp_tally);
    void* at = mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) return false;
    entries_ = static_cast<const gp_tally*>(at);
    count_ = entries;
    return true;
  }
  const gp_tally* begin() const { return entries_; }
  const gp_tally* end() const { return entries_ + count_; }

 private:
  const gp_tally* entries_ = nullptr;
  size_t count_ = 0;
  size_t bytes_ = 0;
};

// Whether the kernel creates mmapable arrays (Linux 5.5), which the tallies are.
bool kernel_has_mmapable_arrays() {
  LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
  int fd =
      bpf_map_create(BPF_MAP_TYPE_ARRAY, nullptr, sizeof(uint32_t), sizeof(gp_tally), 1, &opts);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::string errno_text(int err) { return std::strerror(err < 0 ? -err : err); }

// How a stack from the BPF program ended (enum gp_stack_end); a value it does not know is unknown.
uint8_t stack_end(uint8_t end) {
  return end <= GP_STACK_END_TRUNCATED ? end : uint8_t{GP_STACK_END_UNKNOWN};
}

// Deferred unwinding (bpf/profile.h, struct gp_stack_copy; --unwind-copies a second per CPU): the
// ring's bytes (copies in flight: at most 16 KiB each), and how long a drain waits for the
// tables of a copy's process while they are being loaded.
constexpr uint32_t kStackCopyRingBytes = 8u << 20;
constexpr auto kDeferredWait = std::chrono::milliseconds(250);
// The longest wait for events with --python-frames: new stacks are read (and their Python
// frames named) at least this often.
constexpr int kPythonNamingWaitMs = 200;

class BpfSampler final : public Sampler {
 public:
  explicit BpfSampler(const SamplerConfig& config) : config_(config) {}
  ~BpfSampler() override {
    links_.clear();  // detach before the maps and the cgroup fd go away
    for (int fd : cgroup_fds_) ::close(fd);
  }
  BpfSampler(const BpfSampler&) = delete;
  BpfSampler& operator=(const BpfSampler&) = delete;
  const char* name() const override { return "bpf"; }
  Status open(std::string* hint);
  Status poll(int timeout_ms, const EventSink& on_event,
              const sigset_t* wait_mask = nullptr) override;
  Status drain(const EventSink& on_event, const SampleSink& on_sample) override;
  // Programs still running finish before the drain reads their slot (its RCU wait).
  void stop() override {
    disable_events(perf_fds_);
    stopped_ = true;
  }
  std::vector<model::Counter> counters() override;
  Unwinder* unwinder() override { return unwinder_.get(); }
  record::PythonProcesses* python() override { return python_ ? &python_->processes() : nullptr; }

 private:
  Status configure_and_load(std::string* hint);
  uint32_t counts_map_size() const;
  Status choose_program();
  Status fill_filters();
  Status attach(std::string* hint);
  Status wait_for_running_programs();
  bool programs_left_old_slot();
  // Every possible CPU's cpu_state element into cpu_states_; false when it cannot be read.
  bool read_cpu_states();
  // Takes every entry out of an idle counts map into keys_/values_; returns how many.
  Result<size_t> read_counts(int counts_fd);
  // Entries per CPU of each tally (0: none): room for an interval's keys on a CPU.
  uint32_t tally_size() const;
  Status map_tallies();
  uint32_t next_interval();
  void clear_stacks(int stacks_fd, unsigned slot);
  static int on_ring_event(void* ctx, void* data, size_t size);
  static int on_new_stack(void* ctx, void* data, size_t size);
  static int on_stack_copy(void* ctx, void* data, size_t size);
  // The copied samples of the idle slot, unwound (waiting a little for tables being loaded).
  void emit_deferred(uint32_t idle, const record::StackCopies::Reader& read_stack,
                     const SampleSink& on_sample);

  SamplerConfig config_;
  std::unique_ptr<profile_bpf, SkelDeleter> skel_;
  bpf_program* sample_prog_ = nullptr;  // gp_sample or gp_sample_kernel_walk
  std::vector<PerfFd> perf_fds_;
  std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links_;
  std::unique_ptr<ring_buffer, RingDeleter> ring_;
  const EventSink* sink_ = nullptr;  // valid during poll/drain
  // Each slot's stack map outlives a drain: a stack seen before is a hit in the kernel and in
  // these copies of its frames (one for both maps), not a new insert, lookup and delete every
  // interval.
  record::StackCopies stack_copies_;
  std::vector<uint64_t> new_stack_ips_;  // room for one, reused
  // Room for a whole counts map, allocated once (the map's max_entries).
  std::vector<gp_sample_key> keys_;
  std::vector<uint64_t> values_;
  uint32_t counts_entries_ = 0;  // max_entries of each counts map
  TallyView tallies_[2];
  uint32_t last_interval_ = 0;  // the newest id given to a slot's interval (tally_interval)
  std::vector<int> cgroup_fds_;
  // The loaded program flags its use of a slot (cpu_state.in_slot): most flips need no RCU wait.
  bool slot_handshake_ = false;
  std::vector<gp_cpu_state> cpu_states_;  // room for every possible CPU's element
  bool stopped_ = false;                  // stop() was called: the next drain is the last
  bool unwind_tables_ = false;  // --unwind dwarf|auto with gp_sample: tables loaded, walked in BPF
  std::unique_ptr<record::DeferredStacks> deferred_;  // copies of stacks before tables
  std::unique_ptr<BpfUnwinder> unwinder_;             // after deferred_: it calls it
  std::unique_ptr<UnwindAnnouncer> announcer_;        // after unwinder_: stopped before it goes
  std::unique_ptr<PythonMaps> python_;                // --python-frames
};

Status BpfSampler::configure_and_load(std::string* hint) {
  skel_.reset(profile_bpf__open());
  if (!skel_) return make_error("cannot open the BPF object: " + errno_text(errno));
  if (auto st = choose_program(); !st) return st;
  auto* ro = skel_->rodata;
  ro->filter_pids = !config_.pids.empty();
  ro->filter_tids = !config_.tids.empty();
  ro->filter_cgroup = !config_.cgroups.empty();
  ro->cgroup_count = static_cast<uint32_t>(config_.cgroups.size());
  ro->include_idle = config_.include_idle;
  ro->user_stacks = config_.user_stacks;
  ro->kernel_stacks = config_.kernel_stacks;
  ro->kernel_only = config_.kernel_only;
  // Resize before load: the maps hold one interval's unique stacks and sample slots.
  for (bpf_map* m : {skel_->maps.stacks_a, skel_->maps.stacks_b})
    bpf_map__set_max_entries(m, config_.stack_storage_size);
  counts_entries_ = counts_map_size();
  for (bpf_map* m : {skel_->maps.counts_a, skel_->maps.counts_b})
    bpf_map__set_max_entries(m, counts_entries_);
  uint32_t tally = tally_size();
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return make_error("cannot count the possible CPUs: " + errno_text(-ncpus));
  ro->tally_on = tally > 0;
  ro->tally_mask = tally > 0 ? tally - 1 : 0;
  for (bpf_map* m : {skel_->maps.tally_a, skel_->maps.tally_b}) {
    if (tally > 0) {
      bpf_map__set_max_entries(m, tally * static_cast<uint32_t>(ncpus));
    } else {
      bpf_map__set_map_flags(m, 0);  // a kernel without mmapable arrays; the map goes unused
      bpf_map__set_max_entries(m, 1);
    }
  }
  ro->unwind_tables_on = unwind_tables_;
  if (unwind_tables_) {
    auto limits = unwind_limits(config_.unwind_memory_mib);
    bpf_map__set_max_entries(skel_->maps.unwind_rules, limits.rules);
    bpf_map__set_max_entries(skel_->maps.unwind_rows, limits.rows / GP_UNWIND_ROW_BLOCK);
    bpf_map__set_max_entries(skel_->maps.unwind_pages, limits.pages);
    bpf_map__set_max_entries(skel_->maps.unwind_tables, limits.slots);
    bpf_map__set_max_entries(skel_->maps.unwind_mappings, kUnwindMappings);
    bpf_map__set_max_entries(skel_->maps.unwind_procs, kUnwindProcesses);
    bpf_map__set_max_entries(skel_->maps.unwind_events, 64 * 1024);
    bpf_map__set_max_entries(skel_->maps.unwind_cache, static_cast<uint32_t>(ncpus));
    ro->copy_budget = config_.unwind_copies;
    ro->copy_bytes = config_.unwind_copy_size;
    bpf_map__set_max_entries(skel_->maps.stack_copies, kStackCopyRingBytes);
  } else {
    bpf_map__set_max_entries(skel_->maps.stack_copies,
                             static_cast<uint32_t>(sysconf(_SC_PAGESIZE)));
    bpf_map__set_max_entries(skel_->maps.unwind_events,
                             static_cast<uint32_t>(sysconf(_SC_PAGESIZE)));
    // Unused: no mmapable arrays (Linux 5.5) asked of a kernel that may not have them.
    bpf_map__set_map_flags(skel_->maps.unwind_rows, 0);
    bpf_map__set_map_flags(skel_->maps.unwind_pages, 0);
    bpf_map__set_max_entries(skel_->maps.unwind_cache, 1);
  }
  // Python frames are walked after the native stack, by gp's own walk (bpf_loop).
  ro->python_frames_on = config_.python_frames && slot_handshake_;
  if (ro->python_frames_on) {
    bpf_map__set_max_entries(skel_->maps.python_procs, 4096);
    bpf_map__set_max_entries(skel_->maps.python_threads, 16384);
  } else if (config_.python_frames) {
    return make_error(config_.stack_walker == "kernel"
                          ? "the Python walk needs --stack-walker gp or auto"
                          : "the Python walk needs bpf_loop (Linux 5.17 or newer)");
  }
  bpf_map__set_max_entries(skel_->maps.pid_filter, std::max<size_t>(1, config_.pids.size()));
  bpf_map__set_max_entries(skel_->maps.tid_filter, std::max<size_t>(1, config_.tids.size()));
  int err = profile_bpf__load(skel_.get());
  if (err != 0) {
    if ((err == -EPERM || err == -EACCES) && config_.python_frames)
      *hint = "run as root (or with CAP_BPF and CAP_PERFMON)";
    else if (err == -EPERM || err == -EACCES)
      *hint =
          "run as root (or with CAP_BPF and CAP_PERFMON); without them use --pids of your own "
          "processes "
          "(the perf sampler; kernel.perf_event_paranoid must be <= 2)";
    return make_error(std::string("cannot load the BPF sampler") +
                      (ro->python_frames_on ? " with its Python walk: " : ": ") + errno_text(err));
  }
  return ok_status();
}

// A sample slot per sample an interval can take (four times over, for a flush that comes late),
// at most --stack-storage-size: every drain takes the counts out with one batch that visits each
// hash bucket, so at low frequencies a smaller map is a cheaper drain.
uint32_t BpfSampler::counts_map_size() const {
  double cpus = static_cast<double>(sampled_cpus(config_).size());
  double most = 4.0 * config_.expected_rate * cpus * config_.flush_interval;
  uint64_t entries = std::bit_ceil(static_cast<uint64_t>(std::max(1024.0, std::min(most, 1e9))));
  return static_cast<uint32_t>(std::min<uint64_t>(entries, config_.stack_storage_size));
}

// An interval's samples on a CPU at most (a power of two from 256 to 1024; more than its unique
// keys): the probes find room while the table is far from full, and keys past it go to the
// counts map. 64 bytes an entry, per CPU and slot: 128 KiB per CPU at most.
uint32_t BpfSampler::tally_size() const {
  if (!kernel_has_mmapable_arrays()) return 0;
  double samples = config_.expected_rate * config_.flush_interval;
  return static_cast<uint32_t>(
      std::bit_ceil(static_cast<uint64_t>(std::clamp(samples, 256.0, 1024.0))));
}

Status BpfSampler::map_tallies() {
  if (!skel_->rodata->tally_on) return ok_status();
  size_t entries = bpf_map__max_entries(skel_->maps.tally_a);
  if (!tallies_[0].map(bpf_map__fd(skel_->maps.tally_a), entries) ||
      !tallies_[1].map(bpf_map__fd(skel_->maps.tally_b), entries))
    return make_error("cannot map the sample tallies: " + errno_text(errno));
  return ok_status();
}

// gp_sample walks user stacks itself (bpf_loop, Linux 5.17); gp_sample_kernel_walk leaves every
// stack to the kernel's walker. Only the chosen one is loaded: an older kernel would refuse the
// other.
Status BpfSampler::choose_program() {
  bool loops = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, nullptr) == 1;
  if (config_.stack_walker == "gp" && !loops)
    return make_error("--stack-walker gp needs bpf_loop (Linux 5.17 or newer)");
  bool own = config_.stack_walker == "gp" || (config_.stack_walker == "auto" && loops);
  sample_prog_ = own ? skel_->progs.gp_sample : skel_->progs.gp_sample_kernel_walk;
  slot_handshake_ = own;  // gp_sample flags in_slot (its xchg needs Linux 5.12; bpf_loop is 5.17)
  bpf_program__set_autoload(own ? skel_->progs.gp_sample_kernel_walk : skel_->progs.gp_sample,
                            false);
  unwind_tables_ = own && config_.unwind != "fp";
  if (config_.unwind != "fp" && !own) {
    // Tables need gp's own walk (bpf_loop): say so, rather than silently walking frame pointers.
    std::string why = std::string("--unwind ") + config_.unwind + ": " +
                      (loops ? "--stack-walker kernel walks frame pointers only"
                             : "this kernel has no bpf_loop (Linux 5.17)") +
                      ": falling back to frame pointers";
    if (config_.unwind == "dwarf" || !loops) gp::cli::warning(why);
    else gp::cli::info(1, why);
  }
  gp::cli::info(
      1, unwind_tables_
             ? "user stacks: walked by gp's BPF program (unwind tables, frame pointers where "
               "a binary has none)"
         : own ? "user stacks: walked by gp's BPF program (frame pointers)"
               : "user stacks: walked by the kernel (frame pointers)");
  return ok_status();
}

Status BpfSampler::fill_filters() {
  uint8_t one = 1;
  for (int32_t pid : config_.pids)
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.pid_filter), &pid, &one, BPF_ANY) != 0)
      return make_error("cannot set the pid filter: " + errno_text(errno));
  for (int32_t tid : config_.tids)
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.tid_filter), &tid, &one, BPF_ANY) != 0)
      return make_error("cannot set the tid filter: " + errno_text(errno));
  for (uint32_t i = 0; i < config_.cgroups.size(); ++i) {
    const std::string& dir = config_.cgroups[i];
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return make_error("cannot open cgroup '" + dir + "': " + errno_text(errno));
    cgroup_fds_.push_back(fd);
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.cgroup_filter), &i, &fd, BPF_ANY) != 0)
      return make_error("cannot use cgroup '" + dir + "': " + errno_text(errno));
  }
  return ok_status();
}

Status BpfSampler::attach(std::string* hint) {
  auto attr = sampling_attr(config_);
  if (!attr) return attr.error();
  for (int cpu : sampled_cpus(config_)) {
    auto fd = open_perf_event(*attr, -1, cpu, config_, hint);
    if (!fd) {
      if (errno == ENODEV) continue;  // offline CPU
      return fd.error();
    }
    bpf_link* link = bpf_program__attach_perf_event(sample_prog_, fd->get());
    if (link == nullptr)
      return make_error("cannot attach the BPF sampler to cpu " + std::to_string(cpu) + ": " +
                        errno_text(errno));
    links_.emplace_back(link);
    perf_fds_.push_back(std::move(*fd));
  }
  if (links_.empty()) return make_error("cannot sample: no online CPU among the selected ones");
  bpf_link* exec = bpf_program__attach(skel_->progs.gp_exec);
  if (exec == nullptr)
    return make_error("cannot attach to sched_process_exec: " + errno_text(errno));
  links_.emplace_back(exec);
  bpf_link* exit = bpf_program__attach(skel_->progs.gp_exit);
  if (exit == nullptr)
    return make_error("cannot attach to sched_process_exit: " + errno_text(errno));
  links_.emplace_back(exit);
  return ok_status();
}

Status BpfSampler::open(std::string* hint) {
  libbpf_verbosity = config_.verbose;
  libbpf_set_print(print_libbpf);
  if (auto st = configure_and_load(hint); !st) return st;
  if (auto st = fill_filters(); !st) return st;
  if (unwind_tables_) {
    unwinder_ = std::make_unique<BpfUnwinder>(
        BpfUnwinder::Maps{skel_->maps.unwind_rules, skel_->maps.unwind_rows,
                          skel_->maps.unwind_pages, skel_->maps.unwind_tables,
                          skel_->maps.unwind_mappings, skel_->maps.unwind_procs,
                          &skel_->bss->unwind_generation},
        unwind_limits(config_.unwind_memory_mib), config_.unwind_cache);
    deferred_ = std::make_unique<record::DeferredStacks>(
        [this](int32_t pid, const unwind::UserRegisters& regs, const unwind::StackCopy& stack,
               bool wait) { return unwinder_->unwind_copy(pid, regs, stack, wait); });
    unwinder_->set_listener([this](int32_t pid, bool gone, bool exited) {
      if (gone) deferred_->process_gone(pid, exited);
      else deferred_->tables_changed(pid);
    });
    if (config_.before_sampling) {
      config_.before_sampling(*unwinder_);
      unwinder_->wait_idle();
    }
    auto announcer = UnwindAnnouncer::start(skel_->maps.unwind_events, *unwinder_);
    if (!announcer) return announcer.error();
    announcer_ = std::move(*announcer);
  }
  if (skel_->rodata->python_frames_on) {
    python_ = std::make_unique<PythonMaps>(skel_->maps.python_procs, skel_->maps.python_stats,
                                           config_.python_versions);
    for (int32_t pid : config_.python_pids) python_->announced(pid);  // from their first sample
  }
  ring_.reset(ring_buffer__new(bpf_map__fd(skel_->maps.events), on_ring_event, this, nullptr));
  if (!ring_) return make_error("cannot create the event ring buffer: " + errno_text(errno));
  // New stacks wake no one: every consume of the events (and every drain) takes them too.
  if (ring_buffer__add(ring_.get(), bpf_map__fd(skel_->maps.new_stacks), on_new_stack, this) != 0)
    return make_error("cannot read the new stacks' ring buffer: " + errno_text(errno));
  if (deferred_ && config_.unwind_copies > 0 &&
      ring_buffer__add(ring_.get(), bpf_map__fd(skel_->maps.stack_copies), on_stack_copy, this) !=
          0)
    return make_error("cannot read the stack copies' ring buffer: " + errno_text(errno));
  if (auto st = map_tallies(); !st) return st;
  for (uint32_t& interval : skel_->bss->tally_interval) interval = next_interval();
  return attach(hint);
}

int BpfSampler::on_ring_event(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfSampler*>(ctx);
  if (size < sizeof(gp_event)) return 0;
  gp_event event;
  std::memcpy(&event, data, sizeof(event));
  if (self->python_) {
    const auto pid = static_cast<int32_t>(event.pid);
    if (event.type == GP_EVENT_NEW_PROCESS) self->python_->announced(pid);
    else self->python_->gone(pid, event.type == GP_EVENT_EXIT);
  }
  if (self->sink_ == nullptr) return 0;
  (*self->sink_)(ProcessEvent{static_cast<int32_t>(event.pid), event.type == GP_EVENT_EXEC,
                              event.type == GP_EVENT_EXIT});
  return 0;
}

int BpfSampler::on_new_stack(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfSampler*>(ctx);
  constexpr size_t header = offsetof(gp_new_stack, stack.ips);
  if (size < header) return 0;
  gp_new_stack head;
  std::memcpy(&head, data, header);
  if (head.slot > 1) return 0;
  size_t depth = std::min<size_t>(
      {head.stack.depth, (size - header) / sizeof(uint64_t), size_t{GP_MAX_STACK_DEPTH}});
  // The frames may be unaligned in the ring's record: copied out, not read in place.
  std::vector<uint64_t>& ips = self->new_stack_ips_;
  ips.resize(depth);
  std::memcpy(ips.data(), static_cast<const char*>(data) + header, depth * sizeof(uint64_t));
  self->stack_copies_.put(head.slot, head.key, ips, stack_end(head.stack.end));
  if (self->python_ && head.pid != 0)
    self->python_->processes().prename(static_cast<int32_t>(head.pid), ips);
  return 0;
}

// The Python frames a stack copy's record carries after its bytes (bpf/profile.h): a marker
// and the entries it counts, or nothing when they are not that.
std::vector<uint64_t> python_tail(const uint8_t* from, size_t size) {
  std::vector<uint64_t> tail(size / sizeof(uint64_t));
  if (tail.size() < 2 || size % sizeof(uint64_t) != 0) return {};
  std::memcpy(tail.data(), from, size);
  if (record::split_python_frames(tail).frames.size() != tail.size() - 1) return {};
  return tail;
}

int BpfSampler::on_stack_copy(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfSampler*>(ctx);
  if (!self->deferred_) return 0;
  if (size == sizeof(gp_copy_exec)) {
    // An exec, in order with the process's copies: those before it are of the old image.
    gp_copy_exec exec;
    std::memcpy(&exec, data, sizeof(exec));
    if (exec.magic == GP_COPY_EXEC_MAGIC)
      self->deferred_->image_replaced(static_cast<int32_t>(exec.pid));
    return 0;
  }
  if (size < GP_STACK_COPY_HEADER) return 0;
  gp_stack_copy head;
  std::memcpy(&head, data, GP_STACK_COPY_HEADER);
  record::StackCopySample copy;
  copy.pid = static_cast<int32_t>(head.key.pid);
  copy.tid = static_cast<int32_t>(head.key.tid);
  copy.comm.assign(head.key.comm, strnlen(head.key.comm, sizeof(head.key.comm)));
  copy.kernel_stack_key = head.key.kernel_stack;
  copy.slot = head.slot & 1;
  copy.pending_mapping = head.pending != 0;
  copy.regs = unwind::UserRegisters{head.rip, head.rsp, head.rbp};
  // The kernel's saved registers are the sample's when their rip and rsp are.
  if (head.regs[GP_PT_REGS_RIP] == head.rip && head.regs[GP_PT_REGS_RSP] == head.rsp) {
    copy.regs.general_known = true;
    for (unsigned n = 0; n < copy.regs.general.size(); ++n)
      copy.regs.general[n] = head.regs[GP_PT_REGS_INDEX(n)];
  }
  copy.stack_start = head.rsp - std::min<uint64_t>(head.below, GP_STACK_COPY_RED_ZONE);
  const size_t bytes =
      std::min<size_t>({head.size, size - GP_STACK_COPY_HEADER, size_t{GP_STACK_COPY_BYTES}});
  const auto* from = static_cast<const uint8_t*>(data) + GP_STACK_COPY_HEADER;
  copy.stack.assign(from, from + bytes);
  if (self->python_) copy.python = python_tail(from + bytes, size - GP_STACK_COPY_HEADER - bytes);
  if (!copy.python.empty()) self->python_->processes().prename(copy.pid, copy.python);
  // Its mappings are read again while it lives: tables for the new library, and its frames
  // mapped in the archive (a drain may come only after its exit).
  if (copy.pending_mapping && self->sink_ != nullptr)
    (*self->sink_)(ProcessEvent{copy.pid, false, false, true});
  self->deferred_->add(std::move(copy));
  return 0;
}

void BpfSampler::emit_deferred(uint32_t idle, const record::StackCopies::Reader& read_stack,
                               const SampleSink& on_sample) {
  if (!deferred_) return;
  // A copy whose tables are being built gets them if they come soon; else frame pointers.
  if (deferred_->waiting(idle)) unwinder_->wait_idle_for(kDeferredWait);
  record::RawSample sample;
  // Copies still waiting go to the next drain, unless this is the last one.
  for (auto& d : deferred_->take(idle, !stopped_)) {
    sample.pid = d.pid;
    sample.tid = d.tid;
    sample.comm = std::move(d.comm);
    sample.user_ips = std::move(d.user.frames);
    sample.user_end = static_cast<model::StackEnd>(d.user.end);
    sample.user_ips.insert(sample.user_ips.end(), d.python.begin(), d.python.end());
    sample.kernel_ips.clear();
    if (d.kernel_stack_key != 0)
      sample.kernel_ips = stack_copies_.get(idle, d.kernel_stack_key, read_stack);
    sample.count = 1;
    on_sample(sample);
  }
}

Status BpfSampler::poll(int timeout_ms, const EventSink& on_event, const sigset_t* wait_mask) {
  // New stacks wake no one; with Python frames, they are read often enough to name their frames
  // while the process lives (a short one's samples are assembled after its exit).
  if (python_ && (timeout_ms < 0 || timeout_ms > kPythonNamingWaitMs))
    timeout_ms = kPythonNamingWaitMs;
  // epoll_pwait on libbpf's epoll set (ring_buffer__poll has no signal mask), then consume.
  if (timeout_ms != 0) {
    epoll_event ready;
    if (epoll_pwait(ring_buffer__epoll_fd(ring_.get()), &ready, 1, timeout_ms, wait_mask) < 0 &&
        errno != EINTR)
      return make_error("cannot wait for BPF events: " + errno_text(errno));
  }
  sink_ = &on_event;
  int n = ring_buffer__consume(ring_.get());
  sink_ = nullptr;
  if (n < 0) return make_error("cannot read BPF events: " + errno_text(n));
  return ok_status();
}

// After the flip: true when no CPU is inside a sample that may have read the old slot. Each
// program sets its CPU's in_slot before it reads active_slot (both fully ordered), so a 0 read
// after the flip's fence means that CPU's next sample takes the new slot.
bool BpfSampler::programs_left_old_slot() {
  if (!slot_handshake_) return false;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (!read_cpu_states()) return false;
  for (const gp_cpu_state& cpu : cpu_states_)
    if (cpu.in_slot != 0) return false;
  return true;
}

Status BpfSampler::wait_for_running_programs() {
  if (programs_left_old_slot()) return ok_status();
  // A sample was in flight (or the program has no handshake): re-inserting the barrier map's
  // inner map makes the kernel wait for an RCU grace period (maybe_wait_bpf_programs):
  // afterwards no program still uses the slot we switched away from.
  uint32_t zero = 0;
  int inner = bpf_map__fd(skel_->maps.barrier_inner);
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.rcu_barrier), &zero, &inner, BPF_ANY) != 0)
    return make_error("cannot switch sample maps: " + errno_text(errno));
  return ok_status();
}

Result<size_t> BpfSampler::read_counts(int fd) {
  // Nothing writes the idle slot now: take every entry out in one batch (a batch as large as
  // the map never stops early for a crowded hash bucket).
  keys_.resize(counts_entries_);
  values_.resize(keys_.size());
  size_t taken = 0;
  uint32_t token = 0;
  bool first = true;
  while (taken < keys_.size()) {
    uint32_t n = static_cast<uint32_t>(keys_.size() - taken);
    int err =
        bpf_map_lookup_and_delete_batch(fd, first ? nullptr : &token, &token, keys_.data() + taken,
                                        values_.data() + taken, &n, nullptr);
    first = false;
    taken += n;
    if (err != 0 && errno == ENOENT) break;  // the end of the map
    if (err != 0) return make_error("cannot read the sample counts: " + errno_text(errno));
  }
  return taken;
}

uint32_t BpfSampler::next_interval() {
  if (++last_interval_ == 0) ++last_interval_;  // 0 is an entry never written
  return last_interval_;
}

// Deletes keys from a hash map: in one batch, else (kernels without batch deletes, which leave
// the count as it was) one by one.
void delete_keys(int fd, std::vector<uint64_t>& keys) {
  uint32_t n = static_cast<uint32_t>(keys.size());
  if (n > 0 && bpf_map_delete_batch(fd, keys.data(), &n, nullptr) != 0)
    for (uint64_t k : keys) bpf_map_delete_elem(fd, &k);
}

void BpfSampler::clear_stacks(int fd, unsigned slot) {
  // The stacks stored since the last clear go in one batch. Walking the map costs a system call
  // per key (4096 at least, milliseconds), so it only finds what is left: stacks the ring lost,
  // usually none.
  std::vector<uint64_t> keys = stack_copies_.map_keys(slot);
  delete_keys(fd, keys);
  keys.clear();
  uint64_t key = 0, next = 0;
  const uint64_t* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    keys.push_back(next);
    key = next;
    prev = &key;
  }
  delete_keys(fd, keys);
}

Status BpfSampler::drain(const EventSink& on_event, const SampleSink& on_sample) {
  if (auto st = poll(0, on_event); !st) return st;
  uint32_t idle = skel_->bss->active_slot;
  __atomic_store_n(&skel_->bss->active_slot, idle ^ 1u, __ATOMIC_SEQ_CST);
  if (auto st = wait_for_running_programs(); !st) return st;
  if (auto st = poll(0, on_event); !st) return st;  // announcements of the last samples

  int counts_fd = bpf_map__fd(idle ? skel_->maps.counts_b : skel_->maps.counts_a);
  int stacks_fd = bpf_map__fd(idle ? skel_->maps.stacks_b : skel_->maps.stacks_a);
  // The counts map only when a sample went there (the programs that did are done: above).
  uint32_t& counts_used = skel_->bss->counts_used[idle];
  Result<size_t> entries = size_t{0};
  if (__atomic_exchange_n(&counts_used, 0u, __ATOMIC_ACQ_REL) != 0)
    entries = read_counts(counts_fd);
  if (!entries) return entries.error();
  const record::StackCopies::Reader read_stack =
      [stacks_fd](uint64_t key, std::vector<uint64_t>& ips, uint8_t& end) {
        gp_stack stack{};
        if (bpf_map_lookup_elem(stacks_fd, &key, &stack) == 0) {
          ips.assign(stack.ips, stack.ips + std::min<uint32_t>(stack.depth, GP_MAX_STACK_DEPTH));
          end = stack_end(stack.end);
        }
      };
  record::RawSample sample;
  // The frames only for stacks the session does not know yet. A stack's key is a hash of its
  // frames and of how it ended: keys alone tell stacks apart.
  sample.load_frames = [&](record::RawSample& frames) {
    uint8_t end = 0;
    frames.user_ips = stack_copies_.get(idle, sample.user_stack_key, read_stack, &end);
    frames.user_end = static_cast<model::StackEnd>(end);
    frames.kernel_ips = stack_copies_.get(idle, sample.kernel_stack_key, read_stack);
  };
  auto emit = [&](const gp_sample_key& k, uint64_t count) {
    sample.pid = static_cast<int32_t>(k.pid);
    sample.tid = static_cast<int32_t>(k.tid);
    sample.comm.assign(k.comm, strnlen(k.comm, sizeof(k.comm)));
    sample.user_stack_key = k.user_stack;  // hashes of the frames: the same in both slots
    sample.kernel_stack_key = k.kernel_stack;
    sample.count = count;
    on_sample(sample);
  };
  for (size_t i = 0; i < *entries; ++i) emit(keys_[i], values_[i]);
  emit_deferred(idle, read_stack, on_sample);
  // Each CPU's counts of the interval (a key counted on several CPUs, or also in the map, is
  // summed by the session).
  uint32_t& interval = skel_->bss->tally_interval[idle];
  __atomic_thread_fence(__ATOMIC_ACQUIRE);  // the programs that wrote them are done (above)
  for (const gp_tally& t : tallies_[idle])
    if (t.interval == interval && t.count > 0) emit(t.key, t.count);
  // Idle until the next flip: its entries written so far are out of date once it has a new id.
  interval = next_interval();
  // Stacks stay until a quarter of the slot's stack map is used: the next interval's new stacks
  // still have three quarters of it.
  stack_copies_.end_drain();
  if (stack_copies_.map_entries(idle) > config_.stack_storage_size / 4) {
    clear_stacks(stacks_fd, idle);
    stack_copies_.map_cleared(idle);
  }
  // Code objects are read once a drain: the frames of the new stacks named as they arrived
  // (prename) are named so as the session takes the stacks, and read again after this drain.
  if (python_) python_->processes().next_round();
  return ok_status();
}

bool BpfSampler::read_cpu_states() {
  int ncpus = libbpf_num_possible_cpus();
  cpu_states_.resize(ncpus > 0 ? ncpus : 1);  // 8-byte multiple: no padding
  uint32_t zero = 0;
  return bpf_map_lookup_elem(bpf_map__fd(skel_->maps.cpu_state), &zero, cpu_states_.data()) == 0;
}

std::vector<model::Counter> BpfSampler::counters() {
  uint64_t totals[GP_COUNTER_MAX] = {};
  if (read_cpu_states())
    for (const gp_cpu_state& cpu : cpu_states_)
      for (uint32_t c = 0; c < GP_COUNTER_MAX; ++c) totals[c] += cpu.counters[c];
  auto c = [&](const char* name, uint64_t v) {
    return model::Counter{name, static_cast<int64_t>(v)};
  };
  std::vector<model::Counter> list = {
      c("samples.kernel", totals[GP_COUNTER_SAMPLES]),
      c("samples.filtered", totals[GP_COUNTER_FILTERED]),
      c("stacks.collisions",
        totals[GP_COUNTER_USER_COLLISIONS] + totals[GP_COUNTER_KERNEL_COLLISIONS]),
      c("stacks.collisions.user", totals[GP_COUNTER_USER_COLLISIONS]),
      c("stacks.collisions.kernel", totals[GP_COUNTER_KERNEL_COLLISIONS]),
      c("stacks.errors", totals[GP_COUNTER_STACK_ERRORS]),
      c("maps.full", totals[GP_COUNTER_COUNTS_FULL]),
      c("samples.shared_map", totals[GP_COUNTER_SHARED_MAP]),
      c("events.lost", totals[GP_COUNTER_EVENTS_LOST]),
  };
  if (unwinder_) {
    uint64_t truncated = 0;
    for (uint32_t k = GP_COUNTER_TRUNC_DEPTH; k <= GP_COUNTER_TRUNC_BAD_FRAME; ++k)
      truncated += totals[k];
    truncated += totals[GP_COUNTER_TRUNC_REGISTER];
    for (auto counter : {c("unwind.before_tables", totals[GP_COUNTER_UNWIND_BEFORE_TABLES]),
                         c("unwind.complete", totals[GP_COUNTER_UNWIND_COMPLETE]),
                         c("unwind.truncated", truncated),
                         c("unwind.truncated.depth", totals[GP_COUNTER_TRUNC_DEPTH]),
                         c("unwind.truncated.read", totals[GP_COUNTER_TRUNC_READ]),
                         c("unwind.truncated.no_rule", totals[GP_COUNTER_TRUNC_NO_RULE]),
                         c("unwind.truncated.unsupported", totals[GP_COUNTER_TRUNC_UNSUPPORTED]),
                         c("unwind.truncated.bad_frame", totals[GP_COUNTER_TRUNC_BAD_FRAME]),
                         c("unwind.truncated.register", totals[GP_COUNTER_TRUNC_REGISTER]),
                         c("unwind.fp_frames", totals[GP_COUNTER_UNWIND_FP_FRAMES]),
                         c("unwind.unknown_end", totals[GP_COUNTER_UNWIND_UNKNOWN_END]),
                         c("unwind.searches", totals[GP_COUNTER_UNWIND_SEARCHES]),
                         c("unwind.deferred", totals[GP_COUNTER_DEFERRED]),
                         c("unwind.deferred.bytes", totals[GP_COUNTER_DEFERRED_BYTES]),
                         c("unwind.deferred.fallback", totals[GP_COUNTER_DEFERRED_FALLBACK]),
                         c("unwind.pending_mapping", totals[GP_COUNTER_UNWIND_PENDING]),
                         c("unwind.no_user_space", totals[GP_COUNTER_NO_USER_SPACE])})
      list.push_back(counter);
    if (deferred_) {
      const auto d = deferred_->stats();
      list.push_back(c("unwind.deferred.unwound", d.unwound));
      list.push_back(c("unwind.deferred.complete", d.complete));
      list.push_back(c("unwind.deferred.truncated", d.truncated));
      list.push_back(c("unwind.deferred.copy_end", d.copy_end));
      list.push_back(c("unwind.deferred.without_tables", d.without_tables));
      list.push_back(c("unwind.deferred.pending_mapping", d.pending_mapping));
      list.push_back(c("unwind.deferred.carried", d.carried));
    }
    for (auto& counter : unwinder_->counters()) list.push_back(std::move(counter));
  }
  if (python_)
    for (auto& counter : python_->counters()) list.push_back(std::move(counter));
  return list;
}

}  // namespace

Result<std::unique_ptr<Sampler>> open_bpf_sampler(const SamplerConfig& config, std::string* hint) {
  auto sampler = std::make_unique<BpfSampler>(config);
  if (auto st = sampler->open(hint); !st) return st.error();
  return std::unique_ptr<Sampler>(std::move(sampler));
}

}  // namespace gp::record_tool
