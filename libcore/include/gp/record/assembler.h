#pragma once
// SessionAssembler: turns a sampler's raw samples (pids, thread names, instruction pointers)
// into archive tables — processes, threads, hit mappings, address locations, stacks, samples —
// on a model::Session that the archive Writer streams chunk by chunk (gp-record). Samples
// state their weight (count times the session's sample_period) and the comm they were taken
// under.
//
// Addresses are normalized on the recording host: each user address is matched to the
// executable mapping of its process that covers it (mapping id + file offset, raw value kept);
// kernel addresses go to one "[kernel.kallsyms]" mapping spanning the whole address space, so
// their file offset equals the address. A user address outside every known mapping makes the
// process be re-snapshotted once per drain (a library dlopen'ed since the last snapshot); if it
// is still unknown the location stays unmapped (mapping 0).
//
// Process metadata and mappings come from a ProcessSource (live /proc in gp-record, a fake in
// tests). Snapshots are taken when a process is announced (first sample, exec) and kept while
// it lives, so a process that has exited by the time its samples are drained is still
// described. Only processes and mappings that samples hit are written to the session.
//
// Memory stays flat over a long session on a host where processes come and go: a producer that
// writes each drain with take_entries() keeps no written entry, a process is forgotten two
// drains after its exit was announced (its last samples are in by then) or, when no exit was
// announced (an event lost), after a sweep every kSweepDrains drains finds it gone, and once most
// interned frames and stacks belong to forgotten processes the interning starts afresh (new
// ids for what live processes use again). Not thread-safe.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gp/model/builder.h"
#include "gp/model/session.h"
#include "gp/record/python_frames.h"
#include "gp/util/pair_map.h"
#include "gp/util/result.h"

namespace gp::record {

// One aggregated sample as a sampler delivers it. Stacks are leaf first (as the kernel's
// callchains): the first entry is the interrupted instruction, the others are return addresses.
struct RawSample {
  int32_t pid = 0;
  int32_t tid = 0;
  std::string comm;  // thread name at sample time
  std::vector<uint64_t> user_ips;
  std::vector<uint64_t> kernel_ips;
  uint64_t count = 0;
  int32_t cpu = -1;  // -1 when aggregated over CPUs
  // The sampler's names for the two stacks, when it has them (0 otherwise): equal names, equal
  // frames, for the whole recording. The assembler then interns a stack once, not every drain.
  uint64_t user_stack_key = 0;
  uint64_t kernel_stack_key = 0;
  // How the user stack ended (unknown for frame-pointer walks).
  model::StackEnd user_end = model::StackEnd::unknown;
  // A sampler that names its stacks may leave user_ips, kernel_ips and user_end out and give
  // this instead: the assembler calls it, on a sample of its own, only for stacks it does not
  // know yet (most samples repeat a stack). The keys must then tell apart stacks that ended
  // differently. Frames it cannot load (none) drop the sample.
  std::function<void(RawSample& frames)> load_frames;
};

class ProcessSource {
 public:
  virtual ~ProcessSource() = default;
  virtual Result<model::Process> snapshot(int32_t pid) = 0;
  // Executable mappings, sorted by start address.
  virtual Result<std::vector<model::Mapping>> mappings(int32_t pid) = 0;
  // False once pid has exited (gp/proc/process.h: process_alive).
  virtual bool alive(int32_t pid) = 0;
  // The assembler forgot pid (exited, or not sampled in the last session): state kept for it
  // can go.
  virtual void forgotten(int32_t /*pid*/) {}
};

// What gp-record knows about one process across the whole recording.
struct TrackedProcess {
  model::Process meta;
  std::vector<model::Mapping> mappings;  // sorted by start
  // The image before the last exec: samples taken before it may be drained after it.
  std::vector<model::Mapping> previous_mappings;
  bool have_snapshot = false;  // meta/mappings came from the source (not only from a sample)
  bool exec_pending = false;   // exec'd since the last snapshot: snapshot again when next sampled
  // Addresses that a fresh read of the mappings did not cover either (frame-pointer garbage,
  // mostly): they no longer trigger a re-read every drain.
  std::unordered_set<uint64_t> unmapped_ips;
  // Re-reads for unmapped return addresses wait until drain `next_garbage_reread`; the wait
  // doubles with every re-read that finds the same mappings.
  uint64_t garbage_backoff = 0;
  uint64_t next_garbage_reread = 0;
  // A read for a mapping a sampler met (on_mappings_changed) is not asked again before then.
  int64_t next_remap_ns = 0;
  uint64_t generation = 0;  // bumped by every re-snapshot (exec, dlopen)
  // Set when its exit was announced: the drain count then (forgotten two drains later).
  std::optional<uint64_t> exit_drain;
  uint64_t last_seen_drain = 0;  // the drain of its last sample or announcement
  uint64_t entries = 0;          // table entries its samples made since the interning started
  // Stacks interned for it, by the sampler's stack keys (user, kernel): valid while its mappings
  // and the interning stay as they are; `mapping_changes` tells a change during one sample.
  struct KnownStack {
    uint64_t stack_id;
    bool jit;  // a frame in anonymous executable memory
  };
  // Keyed by the user stack's key, then the kernel stack's key with the user stack's end above
  // it: a sampler may name equal frames that once reached the outermost frame and once were cut
  // (an unreadable page). A flat map: the drain looks up every entry it takes here, and a
  // lookup in node-based map was two or three cache misses.
  using KernelKeyAndEnd = unsigned __int128;
  static KernelKeyAndEnd kernel_key_and_end(uint64_t kernel_key, model::StackEnd end) {
    return static_cast<KernelKeyAndEnd>(static_cast<uint8_t>(end)) << 64 | kernel_key;
  }
  util::PairMap<KernelKeyAndEnd, KnownStack> known_stacks{16};
  // Location ids of return addresses in its mappings, valid as known_stacks is: a new stack
  // mostly repeats the callers of stacks interned before (its leaf is what is new).
  struct KnownLocation {
    uint64_t location_id;
    bool jit;  // in anonymous executable memory
  };
  std::unordered_map<uint64_t, KnownLocation> return_locations;
  uint64_t mapping_changes = 0;
  // Its mappings or the interning changed: the ids found for its stacks and frames no longer hold.
  void forget_interned() {
    known_stacks.clear();
    return_locations.clear();
  }
};

class SessionAssembler {
 public:
  // `kernel_build_id` (raw bytes) is stamped on the kernel mapping. Interning starts afresh
  // when at least `restart_after` entries, and half of all, belong to forgotten processes.
  SessionAssembler(ProcessSource& source, std::string kernel_build_id,
                   uint64_t restart_after = 4096);

  // Starts filling a new session (continuous mode: one per interval). Snapshots of processes
  // the previous session sampled are kept, others are dropped; what was written to the previous
  // session is forgotten.
  void begin_session(model::Session& session);

  // A sampler announced pid: its first sample (snapshot now, while it lives), or an exec. An
  // exec only marks a tracked process for a new snapshot at its next announcement or sample:
  // shells and wrappers exec far more processes than a sampler ever samples.
  void on_process_event(int32_t pid, bool exec);
  // Follow-up reads of the mappings of processes snapshotted when announced (kFollowUpDelayNs
  // later: a first sample during ld.so's start-up saw no libc yet): the time the next is due
  // (CLOCK_MONOTONIC ns; INT64_MAX when none), and doing those due at now_ns. A read that finds
  // the loader still starting (a loaded host, a cold page cache) is followed by another, after
  // the same delay, up to kMaxFollowUps reads (0.2 s in all): each a small file's read. 2 ms:
  // until a library is in the snapshot its frames have no unwind table, and a 50-ms process
  // spends a fifth of its life in 10.
  int64_t next_follow_up_ns() const;
  void follow_up(int64_t now_ns);
  static constexpr int64_t kFollowUpDelayNs = 2'000'000;
  static constexpr int kMaxFollowUps = 100;
  // A sampler met a file mapping of pid that the mappings read so far lack (a library dlopen'ed
  // since): they are read again at the next follow_up, while the process lives, at most once
  // every kRemapIntervalNs. A drain would look too, but the next can be seconds away and a
  // process that exits before it would keep the library's frames unmapped.
  void on_mappings_changed(int32_t pid);
  static constexpr int64_t kRemapIntervalNs = 100'000'000;
  // Every kSweepDrains drains, processes neither sampled nor announced since the last sweep are
  // checked: those gone are forgotten as if their exit had been announced. A sampler's exit
  // announcement can be lost (a full ring buffer, an evicted entry of its table).
  static constexpr uint64_t kSweepDrains = 64;
  // Tests replace the clock (CLOCK_MONOTONIC ns) that schedules follow-ups.
  void set_clock(int64_t (*now)()) { now_ = now; }
  // A sampler saw pid's main thread exit. Its samples may still be queued: it is forgotten at
  // the end of the second drain from now, unless it still lives then (other threads).
  void on_process_exit(int32_t pid);
  // Adds one sample to the current session.
  void add(const RawSample& sample);
  // Moves what the session gained since the last call into `out` (for Writer::write_delta);
  // returns the entry counts it follows.
  model::TableCounts take_entries(model::Session& out) { return builder_->take_entries(out); }
  // Marks the end of one drain, after the Writer wrote (and cleared) the session's samples:
  // allows one more dlopen re-snapshot per process, forgets exited processes, and may restart
  // the interning (only when the session's lists were taken out).
  void end_drain();

  // Distinct kernel addresses sampled in the current session (for the kallsyms subset).
  const std::set<uint64_t>& kernel_addresses() const { return kernel_addresses_; }
  // Pids with samples in the current session, less those forgotten since.
  const std::set<int32_t>& sampled_pids() const { return sampled_pids_; }
  // Processes sampled in the current session, forgotten ones included.
  uint64_t sampled_process_count() const { return sampled_process_count_; }
  // The innermost-namespace pid of a tracked process (pid itself when unknown).
  int32_t ns_pid(int32_t pid) const;
  // What is known of a tracked process, or nullptr.
  const TrackedProcess* tracked(int32_t pid) const;
  // Pids whose samples in the current drain ran in anonymous executable memory (JIT code: their
  // perf maps are worth copying while they live).
  const std::set<int32_t>& jit_candidates() const { return jit_candidates_; }
  size_t tracked_processes() const { return processes_.size(); }
  uint64_t snapshots() const { return snapshots_; }
  uint64_t resnapshots() const { return resnapshots_; }
  uint64_t follow_up_snapshots() const { return follow_up_snapshots_; }
  uint64_t forgotten() const { return forgotten_; }
  uint64_t interning_restarts() const { return restarts_; }

  // Python frames in native stacks (gp/record/python_frames.h): the user stacks of the processes
  // `python` walks have their Python frames spliced in, named, and their native frames are of
  // kind python_native. The assembler does not own it; nullptr: none (Python entries, if any, are
  // dropped).
  void set_python(PythonProcesses* python) { python_ = python; }
  struct PythonStats {
    uint64_t spliced = 0;    // new stacks of walked processes with their Python frames
    uint64_t unspliced = 0;  // ...with Python frames that could not be placed or named
  };
  const PythonStats& python_stats() const { return python_stats_; }

 private:
  TrackedProcess& track(int32_t pid, const std::string& comm);
  void take_snapshot(TrackedProcess& p, int32_t pid);
  // What interning a sample's frames found, for the known-stacks cache.
  struct FrameFacts {
    bool jit = false;                 // a user frame in anonymous executable memory
    bool unchecked_unmapped = false;  // a user frame outside the mappings no re-read looked for
  };
  // A user frame's location id: a return address interned before by address, else located.
  uint64_t user_location(TrackedProcess& p, int32_t pid, uint64_t ip, bool is_return,
                         FrameFacts& facts, model::FrameKind kind = model::FrameKind::native);
  // Finds the mapping that holds ip (re-reading the mappings when the rules allow) and interns
  // the location; a mapped return address is remembered in p.return_locations.
  TrackedProcess::KnownLocation locate_user(TrackedProcess& p, int32_t pid, uint64_t ip,
                                            bool is_return, FrameFacts& facts,
                                            model::FrameKind kind);
  // The user frames of a walked Python process, Python frames spliced in; false when the stack
  // has Python frames that cannot be placed or named (then nothing is added to `ids`).
  bool python_user_frames(TrackedProcess& p, int32_t pid, const PyStackParts& parts,
                          std::span<const uint64_t> native, std::vector<uint64_t>& ids,
                          FrameFacts& facts);
  // The stack's id; none when the sample has no frames after all (load_frames found none).
  std::optional<uint64_t> intern_stack(TrackedProcess& p, const RawSample& sample);
  // p's mappings were replaced: stacks interned with the old ones may resolve otherwise now.
  static void mappings_changed(TrackedProcess& p);
  // A re-read of p's mappings (not yet sorted) replaces the known ones only when it differs:
  // most re-reads find the same, and the stacks interned for them stay valid. True if replaced.
  static bool adopt_mappings(TrackedProcess& p, std::vector<model::Mapping> fresh);
  uint64_t kernel_location(uint64_t ip, bool is_return);
  static const model::Mapping* find_mapping(const std::vector<model::Mapping>& maps, uint64_t ip);
  void sweep_unseen();
  void forget_exited();
  void maybe_restart_interning();

  ProcessSource& source_;
  PythonProcesses* python_ = nullptr;
  PythonStats python_stats_;
  std::string kernel_build_id_;
  model::Session* session_ = nullptr;
  std::unique_ptr<model::SessionBuilder> builder_;
  std::unordered_map<int32_t, TrackedProcess> processes_;
  std::unordered_map<int32_t, uint64_t> written_generation_;  // pid -> generation in session
  std::set<int32_t> resnapshotted_this_drain_;
  std::set<uint64_t> kernel_addresses_;
  std::set<int32_t> sampled_pids_;
  std::set<int32_t> jit_candidates_;
  uint64_t kernel_mapping_id_ = 0;
  uint64_t snapshots_ = 0;
  uint64_t resnapshots_ = 0;
  uint64_t restart_after_;
  int64_t (*now_)();
  struct FollowUp {
    int64_t due_ns;
    int32_t pid;
    int reads = 1;  // the follow-up reads this one makes (1 for the first)
  };
  // Queues a follow-up read of pid's mappings, in due order.
  void schedule_follow_up(int64_t due_ns, int32_t pid, int reads);
  std::deque<FollowUp> follow_ups_;  // in due order
  uint64_t follow_up_snapshots_ = 0;
  std::vector<int32_t> exiting_;  // pids whose exit was announced, not yet forgotten
  RawSample loaded_;              // room for the frames of a sample given with load_frames
  uint64_t drains_ = 0;
  uint64_t dead_entries_ = 0;  // entries made by processes forgotten since the restart
  uint64_t entries_at_restart_ = 0;
  uint64_t sampled_process_count_ = 0;
  uint64_t forgotten_ = 0;
  uint64_t restarts_ = 0;
  uint64_t sample_period_ = 0;  // Sample.weight per sample (sample_period of the session)
};

// What one sample stands for, as Sample.weight states it: the fixed period, or for a clock
// event sampled at a frequency its nanoseconds (1e9 / frequency); 0 when unknown (another
// event in frequency mode, whose period the kernel varies).
uint64_t sample_period(const model::Sampling& sampling);

// The kernel's mapping as gp-record writes it (pid 0, [0, UINT64_MAX), "[kernel.kallsyms]").
model::Mapping kernel_mapping(const std::string& kernel_build_id);

}  // namespace gp::record
