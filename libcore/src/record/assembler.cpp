// Session assembly for gp-record: raw sampled addresses -> normalized archive tables.
#include "gp/record/assembler.h"

#include <time.h>

#include <algorithm>
#include <limits>
#include <string_view>

#include "gp/proc/process.h"

namespace gp::record {

namespace {
constexpr size_t kMaxUnmappedIps = 4096;  // per process
// Drains between re-reads of the mappings for unmapped return addresses, at most: a library
// loaded meanwhile shows at once in a leaf, and in a return address within this many drains.
constexpr uint64_t kMaxGarbageBackoff = 64;

// Table entries a builder has made (ids handed out), every table together.
uint64_t entry_total(const model::TableCounts& c) {
  return c.processes + c.threads + c.mappings + c.functions + c.locations + c.stacks;
}

void sort_by_start(std::vector<model::Mapping>& maps) {
  std::sort(maps.begin(), maps.end(),
            [](const model::Mapping& a, const model::Mapping& b) { return a.start < b.start; });
}

int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

bool loader_starting(const TrackedProcess& p) { return proc::loader_still_mapping(p.mappings); }

// A re-read of a process that had code mapped and now has none: it is exiting (its address
// space is gone; a zombie's maps file is empty). What was read before is still the truth.
bool address_space_gone(const Result<std::vector<model::Mapping>>& fresh,
                        const std::vector<model::Mapping>& known) {
  return fresh && fresh->empty() && !known.empty();
}

bool lists_empty(const model::Session& s) {
  return s.processes.empty() && s.threads.empty() && s.mappings.empty() && s.functions.empty() &&
         s.locations.empty() && s.stacks.empty() && s.samples.empty();
}
}  // namespace

uint64_t sample_period(const model::Sampling& sampling) {
  if (sampling.period > 0) return sampling.period;
  bool clock =
      sampling.event.empty() || sampling.event == "cpu-clock" || sampling.event == "task-clock";
  // A clock event at F Hz: the kernel's hrtimer fires every 1e9/F ns.
  if (clock && sampling.frequency_hz > 0) return 1'000'000'000ull / sampling.frequency_hz;
  return 0;
}

model::Mapping kernel_mapping(const std::string& kernel_build_id) {
  model::Mapping m;
  m.pid = 0;
  m.start = 0;
  m.end = std::numeric_limits<uint64_t>::max();
  m.file_offset = 0;
  m.path = "[kernel.kallsyms]";
  m.build_id = kernel_build_id;
  m.kind = model::MappingKind::kernel;
  return m;
}

SessionAssembler::SessionAssembler(ProcessSource& source, std::string kernel_build_id,
                                   uint64_t restart_after)
    : source_(source),
      kernel_build_id_(std::move(kernel_build_id)),
      restart_after_(restart_after),
      now_(monotonic_ns) {}

void SessionAssembler::begin_session(model::Session& session) {
  if (session_ != nullptr) {
    // Forget processes the previous session never sampled (exited, idle or only announced), so
    // memory stays flat over days of --continuous; one that shows up again is snapshotted anew.
    for (auto it = processes_.begin(); it != processes_.end();) {
      if (sampled_pids_.count(it->first)) {
        ++it;
        continue;
      }
      source_.forgotten(it->first);
      it = processes_.erase(it);
    }
  }
  session_ = &session;
  builder_ = std::make_unique<model::SessionBuilder>(session);
  sample_period_ = sample_period(session.header.sampling);
  written_generation_.clear();
  resnapshotted_this_drain_.clear();
  kernel_addresses_.clear();
  sampled_pids_.clear();
  jit_candidates_.clear();
  kernel_mapping_id_ = 0;
  dead_entries_ = 0;
  entries_at_restart_ = 0;
  sampled_process_count_ = 0;
  for (auto& [pid, p] : processes_) {
    p.entries = 0;
    p.forget_interned();  // their ids belong to the previous session
  }
}

void SessionAssembler::mappings_changed(TrackedProcess& p) {
  p.forget_interned();
  ++p.mapping_changes;
}

bool SessionAssembler::adopt_mappings(TrackedProcess& p, std::vector<model::Mapping> fresh) {
  sort_by_start(fresh);
  if (fresh == p.mappings) return false;
  p.mappings = std::move(fresh);
  mappings_changed(p);
  return true;
}

void SessionAssembler::take_snapshot(TrackedProcess& p, int32_t pid) {
  ++snapshots_;
  auto meta = source_.snapshot(pid);
  if (!meta) {
    // Gone already: keep what an earlier snapshot (or the sample) told us.
    p.meta.pid = pid;
    p.meta.exited = true;
    p.exec_pending = false;
    return;
  }
  auto maps = source_.mappings(pid);
  p.meta = std::move(*meta);
  if (maps && !address_space_gone(maps, p.mappings)) {
    if (p.have_snapshot) p.previous_mappings = std::move(p.mappings);  // exec: keep the old image
    p.mappings = std::move(*maps);
    sort_by_start(p.mappings);
    mappings_changed(p);
  }
  p.have_snapshot = true;
  p.exec_pending = false;
  p.unmapped_ips.clear();  // a new image
  p.garbage_backoff = p.next_garbage_reread = 0;
  ++p.generation;
}

void SessionAssembler::on_process_event(int32_t pid, bool exec) {
  if (pid <= 0) return;
  if (exec) {
    auto it = processes_.find(pid);
    if (it != processes_.end() && it->second.have_snapshot) it->second.exec_pending = true;
    return;
  }
  auto [it, inserted] = processes_.try_emplace(pid);
  TrackedProcess& p = it->second;
  p.last_seen_drain = drains_;
  // Announced again after its exit: a sample of its last moments (dead: nothing new), its
  // other threads living on, or a new process with the pid. forget_exited() decides which.
  if (p.exit_drain && !source_.alive(pid)) return;
  // Any other announcement of a tracked pid follows an exec, or the sampler lost track of the pid
  // (its table evicted it, or its exit went unannounced and the pid is another process's now):
  // a snapshot in every case.
  take_snapshot(p, pid);
  // Its first sample came while ld.so was still mapping libraries: look again soon, while even
  // a short-lived process still runs.
  if (p.have_snapshot && !p.meta.exited && loader_starting(p))
    schedule_follow_up(now_() + kFollowUpDelayNs, pid, 1);
}

int64_t SessionAssembler::next_follow_up_ns() const {
  return follow_ups_.empty() ? std::numeric_limits<int64_t>::max() : follow_ups_.front().due_ns;
}

void SessionAssembler::schedule_follow_up(int64_t due_ns, int32_t pid, int reads) {
  auto at = std::upper_bound(follow_ups_.begin(), follow_ups_.end(), due_ns,
                             [](int64_t due, const FollowUp& f) { return due < f.due_ns; });
  follow_ups_.insert(at, FollowUp{due_ns, pid, reads});
}

void SessionAssembler::follow_up(int64_t now_ns) {
  while (!follow_ups_.empty() && follow_ups_.front().due_ns <= now_ns) {
    const FollowUp due = follow_ups_.front();
    follow_ups_.pop_front();
    auto it = processes_.find(due.pid);
    if (it == processes_.end() || it->second.exit_drain) continue;
    TrackedProcess& p = it->second;
    auto maps = source_.mappings(due.pid);
    if (!maps || address_space_gone(maps, p.mappings)) continue;  // exited: the snapshot stays
    ++follow_up_snapshots_;
    if (adopt_mappings(p, std::move(*maps))) p.unmapped_ips.clear();
    // Steady, not backing off: once ld.so maps libc, a short-lived process may have only its
    // own few tens of milliseconds left, and the next read must come within them.
    if (due.reads < kMaxFollowUps && loader_starting(p))
      schedule_follow_up(now_ns + kFollowUpDelayNs, due.pid, due.reads + 1);
  }
}

void SessionAssembler::on_mappings_changed(int32_t pid) {
  auto it = processes_.find(pid);
  if (pid <= 0 || it == processes_.end() || it->second.exit_drain) return;
  TrackedProcess& p = it->second;
  const int64_t now = now_();
  if (now < p.next_remap_ns) return;
  p.next_remap_ns = now + kRemapIntervalNs;
  schedule_follow_up(now, pid, kMaxFollowUps);  // one read: no look-again after it
}

void SessionAssembler::on_process_exit(int32_t pid) {
  auto it = processes_.find(pid);
  if (pid <= 0 || it == processes_.end() || it->second.exit_drain) return;
  it->second.exit_drain = drains_;
  exiting_.push_back(pid);
}

const TrackedProcess* SessionAssembler::tracked(int32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second;
}

int32_t SessionAssembler::ns_pid(int32_t pid) const {
  const TrackedProcess* p = tracked(pid);
  return p != nullptr && p->meta.ns_pid > 0 ? p->meta.ns_pid : pid;
}

TrackedProcess& SessionAssembler::track(int32_t pid, const std::string& comm) {
  auto [it, inserted] = processes_.try_emplace(pid);
  TrackedProcess& p = it->second;
  // The announcement was lost or not sent, or the process exec'd since its snapshot (samples
  // of the old image drained now still find it in previous_mappings).
  if (pid > 0 && (inserted || p.exec_pending)) take_snapshot(p, pid);
  if (p.meta.pid == 0) {
    p.meta.pid = pid;
    p.meta.ns_pid = pid;
  }
  if (p.meta.comm.empty() && pid == 0) p.meta.comm = "swapper";
  if (p.meta.comm.empty()) p.meta.comm = comm;
  return p;
}

const model::Mapping* SessionAssembler::find_mapping(const std::vector<model::Mapping>& maps,
                                                     uint64_t ip) {
  auto it = std::upper_bound(maps.begin(), maps.end(), ip,
                             [](uint64_t a, const model::Mapping& m) { return a < m.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  return ip < it->end ? &*it : nullptr;
}

uint64_t SessionAssembler::user_location(TrackedProcess& p, int32_t pid, uint64_t ip,
                                         bool is_return, FrameFacts& facts, model::FrameKind kind) {
  // The cache holds native frames only: a Python process's are interned by the builder.
  auto known = is_return && kind == model::FrameKind::native ? p.return_locations.find(ip)
                                                             : p.return_locations.end();
  const TrackedProcess::KnownLocation location =
      known != p.return_locations.end() ? known->second
                                        : locate_user(p, pid, ip, is_return, facts, kind);
  if (location.jit) {
    jit_candidates_.insert(pid);
    facts.jit = true;
  }
  return location.location_id;
}

TrackedProcess::KnownLocation SessionAssembler::locate_user(TrackedProcess& p, int32_t pid,
                                                            uint64_t ip, bool is_return,
                                                            FrameFacts& facts,
                                                            model::FrameKind kind) {
  const model::Mapping* m = find_mapping(p.mappings, ip);
  // A return address is often frame-pointer garbage (code built without frame pointers), new
  // in every drain of a busy process: it re-reads the mappings less and less often while the
  // re-reads find nothing new. A leaf is the CPU's own ip: outside the mappings, it is news.
  const bool may_reread = !is_return || drains_ >= p.next_garbage_reread;
  if (m == nullptr && pid > 0 && may_reread && !p.unmapped_ips.contains(ip) &&
      resnapshotted_this_drain_.insert(pid).second) {
    // Probably a library loaded after the last snapshot (dlopen): look again, once per drain.
    ++resnapshots_;
    auto maps = source_.mappings(pid);
    if (maps && !address_space_gone(maps, p.mappings)) {
      if (adopt_mappings(p, std::move(*maps))) {
        p.garbage_backoff = 0;
      } else {
        p.garbage_backoff =
            std::min(std::max<uint64_t>(1, p.garbage_backoff * 2), kMaxGarbageBackoff);
      }
      p.next_garbage_reread = drains_ + p.garbage_backoff;
    }
    m = find_mapping(p.mappings, ip);
  }
  if (m == nullptr) m = find_mapping(p.previous_mappings, ip);  // taken before the last exec
  if (m == nullptr && pid > 0 && resnapshotted_this_drain_.contains(pid)) {
    if (p.unmapped_ips.size() >= kMaxUnmappedIps)
      p.unmapped_ips.clear();   // a bound, not a cache policy
    p.unmapped_ips.insert(ip);  // the mappings read this drain do not cover it
  }
  // An address no read of the mappings has looked for yet (a re-read is backing off) may still
  // map: a stack holding one must be looked at again.
  if (m == nullptr && !p.unmapped_ips.contains(ip)) facts.unchecked_unmapped = true;
  uint64_t mapping_id = m ? builder_->mapping(*m) : 0;
  const TrackedProcess::KnownLocation location{
      builder_->address_location(mapping_id, ip, kind, is_return),
      m != nullptr && m->kind == model::MappingKind::anonymous};
  // Only mapped addresses: an unmapped one takes the re-read rules above every time.
  if (m != nullptr && is_return && kind == model::FrameKind::native)
    p.return_locations.emplace(ip, location);
  return location;
}

uint64_t SessionAssembler::kernel_location(uint64_t ip, bool is_return) {
  if (kernel_mapping_id_ == 0)
    kernel_mapping_id_ = builder_->mapping(kernel_mapping(kernel_build_id_));
  kernel_addresses_.insert(ip);
  return builder_->address_location(kernel_mapping_id_, ip, model::FrameKind::kernel, is_return);
}

// The stack id of a sample's frames. A stack the sampler named before (same keys, same
// mappings, same interning) is not interned again: most drains repeat most stacks.
std::optional<uint64_t> SessionAssembler::intern_stack(TrackedProcess& p, const RawSample& sample) {
  const TrackedProcess::KernelKeyAndEnd second =
      TrackedProcess::kernel_key_and_end(sample.kernel_stack_key, sample.user_end);
  const bool keyed = sample.user_stack_key != 0 || sample.kernel_stack_key != 0;
  if (keyed) {
    if (const TrackedProcess::KnownStack* hit =
            p.known_stacks.find(sample.user_stack_key, second)) {
      if (hit->jit) jit_candidates_.insert(sample.pid);
      return hit->stack_id;
    }
  }
  const RawSample* frames = &sample;
  if (sample.load_frames) {
    loaded_.user_ips.clear();
    loaded_.kernel_ips.clear();
    loaded_.user_end = model::StackEnd::unknown;
    sample.load_frames(loaded_);
    if (loaded_.user_ips.empty() && loaded_.kernel_ips.empty()) return std::nullopt;
    frames = &loaded_;
  }
  const uint64_t changes_before = p.mapping_changes;
  FrameFacts facts;
  std::vector<uint64_t> ids;
  ids.reserve(frames->kernel_ips.size() + frames->user_ips.size());
  // Leaf first, kernel frames before user frames (formats/archive.capnp, Stack).
  for (size_t i = 0; i < frames->kernel_ips.size(); ++i)
    ids.push_back(kernel_location(frames->kernel_ips[i], i > 0));
  std::span<const uint64_t> user(frames->user_ips);
  if (python_ == nullptr) {
    for (size_t i = 0; i < user.size(); ++i)
      ids.push_back(user_location(p, sample.pid, user[i], i > 0, facts));
  } else {
    const PyStackParts parts = split_python_frames(user);
    const std::span<const uint64_t> native = user.first(parts.native);
    if (!python_user_frames(p, sample.pid, parts, native, ids, facts)) {
      const auto kind =
          python_->walked(sample.pid) ? model::FrameKind::python_native : model::FrameKind::native;
      for (size_t i = 0; i < native.size(); ++i)
        ids.push_back(user_location(p, sample.pid, native[i], i > 0, facts, kind));
    }
  }
  uint64_t stack_id = builder_->stack(ids, frames->user_end);
  // A stack whose mappings changed while it was interned is looked at again. One whose unmapped
  // frames a re-read has looked for (frame-pointer garbage, mostly) is kept: a later change of the
  // mappings (dlopen) clears the known stacks.
  if (keyed && !facts.unchecked_unmapped && p.mapping_changes == changes_before)
    p.known_stacks.try_insert(sample.user_stack_key, second,
                              TrackedProcess::KnownStack{stack_id, facts.jit});
  return stack_id;
}

bool SessionAssembler::python_user_frames(TrackedProcess& p, int32_t pid, const PyStackParts& parts,
                                          std::span<const uint64_t> native,
                                          std::vector<uint64_t>& ids, FrameFacts& facts) {
  if (parts.frames.empty() || !python_->walked(pid)) return false;
  auto spliced = splice_python_frames(native, parts, python_->eval_ranges(pid));
  std::vector<PyFrameName> names(parts.frames.size());
  for (size_t i = 0; spliced && i < parts.frames.size(); ++i)
    if (!python_->name(pid, parts.frames[i], names[i])) spliced.reset();
  if (!spliced) {
    ++python_stats_.unspliced;
    return false;
  }
  ++python_stats_.spliced;
  for (const SplicedFrame& f : *spliced) {
    if (!f.python) {
      ids.push_back(user_location(p, pid, native[f.index], f.index > 0, facts,
                                  model::FrameKind::python_native));
      continue;
    }
    const PyFrameName& n = names[f.index];
    const uint64_t function = builder_->function(n.name, n.file, n.first_line, {}, n.package);
    ids.push_back(builder_->symbolic_location(model::FrameKind::python, function, n.line));
  }
  return true;
}

void SessionAssembler::add(const RawSample& sample) {
  const bool frameless = sample.load_frames
                             ? sample.user_stack_key == 0 && sample.kernel_stack_key == 0
                             : sample.user_ips.empty() && sample.kernel_ips.empty();
  if (sample.count == 0 || frameless) return;
  TrackedProcess& p = track(sample.pid, sample.comm);
  p.last_seen_drain = drains_;
  const uint64_t entries_before = entry_total(builder_->created());
  const std::optional<uint64_t> interned = intern_stack(p, sample);
  if (!interned) return;
  const uint64_t stack_id = *interned;

  auto [gen, first] = written_generation_.try_emplace(sample.pid, p.generation);
  if (first || gen->second != p.generation) {
    builder_->process(p.meta);
    gen->second = p.generation;
  }
  builder_->thread(sample.tid, sample.pid, sample.comm);
  // The process's name when sampled: the main thread's own comm then (samples taken before an
  // exec keep the old name), else the process's as last read.
  // The idle task (pid 0, "swapper/N" per CPU) is one process, "swapper", as perf names it.
  const std::string& comm = sample.pid == 0                                   ? p.meta.comm
                            : sample.tid == sample.pid || p.meta.comm.empty() ? sample.comm
                                                                              : p.meta.comm;
  builder_->add_sample(sample.pid, sample.tid, stack_id, sample.count,
                       sample.count * sample_period_, sample.cpu, comm);
  // Shared entries (kernel frames) count for the process that made them first: an estimate.
  p.entries += entry_total(builder_->created()) - entries_before;
  if (sampled_pids_.insert(sample.pid).second) ++sampled_process_count_;
}

void SessionAssembler::end_drain() {
  resnapshotted_this_drain_.clear();
  jit_candidates_.clear();
  if (!builder_) return;
  builder_->forget_samples();
  ++drains_;
  if (drains_ % kSweepDrains == 0) sweep_unseen();
  forget_exited();
  maybe_restart_interning();
}

void SessionAssembler::sweep_unseen() {
  for (auto& [pid, p] : processes_) {
    if (pid <= 0 || p.exit_drain || p.last_seen_drain + kSweepDrains > drains_) continue;
    if (source_.alive(pid)) continue;  // idle: its samples may come back
    p.exit_drain = drains_;
    exiting_.push_back(pid);
  }
}

void SessionAssembler::forget_exited() {
  // A sample taken just before the exit is drained at the latest by the drain after the one
  // that was running when the announcement came.
  auto due = [&](int32_t pid) {
    auto it = processes_.find(pid);
    if (it == processes_.end() || !it->second.exit_drain) return true;
    if (drains_ < *it->second.exit_drain + 2) return false;
    TrackedProcess& p = it->second;
    if (source_.alive(pid)) {
      p.exit_drain.reset();  // the main thread left, others run on
      return true;
    }
    dead_entries_ += p.entries;
    processes_.erase(it);
    source_.forgotten(pid);
    written_generation_.erase(pid);
    sampled_pids_.erase(pid);
    ++forgotten_;
    return true;
  };
  exiting_.erase(std::remove_if(exiting_.begin(), exiting_.end(), due), exiting_.end());
}

void SessionAssembler::maybe_restart_interning() {
  const uint64_t made = entry_total(builder_->created()) - entries_at_restart_;
  if (dead_entries_ < restart_after_ || dead_entries_ * 2 < made || !lists_empty(*session_)) return;
  // The new builder's ids go on after every entry written so far; live processes' frames and
  // stacks get new entries when they are sampled again.
  builder_ = std::make_unique<model::SessionBuilder>(*session_, builder_->created());
  entries_at_restart_ = entry_total(builder_->created());
  dead_entries_ = 0;
  for (auto& [pid, p] : processes_) {
    p.entries = 0;
    p.forget_interned();  // ids of the old builder
  }
  written_generation_.clear();
  kernel_mapping_id_ = 0;
  ++restarts_;
}

}  // namespace gp::record
