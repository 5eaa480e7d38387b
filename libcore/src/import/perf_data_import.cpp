// perf.data → model::Session (see gp/import/perf_data.h).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "gp/import/perf_data.h"
#include "gp/import/perf_data_features.h"
#include "gp/import/perf_data_header.h"
#include "gp/import/perf_data_records.h"
#include "gp/model/builder.h"
#include "gp/record/assembler.h"
#include "import/perf_bytes.h"
#include "import/perf_data_maps.h"
#include "import/perf_data_unwind.h"
#include "import/perf_header.h"

namespace gp::import {
namespace {

constexpr uint32_t kTypeHardware = 0, kTypeSoftware = 1;
// Records between two progress reports: frequent enough for a line redrawn every 200 ms, rare
// enough to cost nothing.
constexpr uint64_t kRecordsPerProgress = 4096;

// perf's names for the generic events, when the file does not name its events (pipe mode
// without EVENT_UPDATE, old files without EVENT_DESC).
std::string fallback_event_name(const PerfAttr& a) {
  static const char* const kHardware[] = {
      "cycles",      "instructions", "cache-references",        "cache-misses",
      "branches",    "branch-misses", "bus-cycles",             "stalled-cycles-frontend",
      "stalled-cycles-backend", "ref-cycles"};
  static const char* const kSoftware[] = {
      "cpu-clock",   "task-clock",     "page-faults",      "context-switches",
      "cpu-migrations", "minor-faults", "major-faults",    "alignment-faults",
      "emulation-faults", "dummy",     "bpf-output",       "cgroup-switches"};
  if (a.type == kTypeHardware && a.config < std::size(kHardware)) return kHardware[a.config];
  if (a.type == kTypeSoftware && a.config < std::size(kSoftware)) return kSoftware[a.config];
  return "type" + std::to_string(a.type) + ":config" + std::to_string(a.config);
}

// One record of the current round, waiting for its turn in time order.
struct Queued {
  uint64_t time;
  uint64_t seq;
  PerfRecord record;
  int attr;  // index in attrs_, -1 when unknown
};

struct ThreadState {
  int32_t pid = 0;
  std::string comm;
  bool has_comm = false;
  std::string noted_comm;  // as last given to the builder
  bool noted = false;
};

}  // namespace

class PerfDataImporter::Impl {
 public:
  Impl(model::Session& s, PerfDataOptions o)
      : s_(s), b_(s), opt_(std::move(o)), unwinder_(opt_.unwind_tables) {
    s_.header.source = model::SourceKind::imported;
  }
  bool import(std::span<const uint8_t> bytes, std::string& error);
  void forget_samples() { b_.forget_samples(); }

  PerfDataStats stats_;
  std::set<uint64_t> kernel_addresses_;
  std::string kernel_build_id_;
  PerfFeatures features_;

 private:
  bool walk(std::span<const uint8_t> bytes, const PerfDataHeader& h, std::string& error);
  void reserve_lists(std::span<const uint8_t> bytes, const PerfDataHeader& h);
  bool user_record(const PerfRecord& r, std::string& error);
  void add_attr(PerfAttr a);
  int attr_of_sample(const PerfRecord& r) const;
  int attr_of_trailer(const PerfRecord& r) const;
  void queue(const PerfRecord& r);
  bool flush_round();
  void process(const Queued& q);
  void on_sample(const PerfRecord& r, int attr);
  // The user part of a sample with registers and a stack copy; false when it has none.
  bool walk_user_stack(const PerfAttr& attr, const PerfSample& smp);
  void on_mmap(const PerfRecord& r);
  void on_comm(const PerfRecord& r);
  void on_fork(const PerfRecord& r);
  void bad(const PerfRecord& r, const std::string& why);
  bool select(int attr);
  // A frame of the current sample's chain, its mapping made when first met (ids in frame order).
  void add_kernel_frame(uint64_t ip, bool is_return);
  void add_user_frame(PerfAddressSpace* space, int32_t pid, uint64_t ip, bool is_return);
  ThreadState& thread(int32_t tid);
  const std::string& note_sample_thread(int32_t pid, int32_t tid);
  void finish_header();
  std::string build_id_of(std::string_view path) const;

  model::Session& s_;
  model::SessionBuilder b_;
  PerfDataOptions opt_;
  std::vector<PerfAttr> attrs_;
  std::unordered_map<uint64_t, int> attr_by_id_;
  uint64_t id_layout_ = 0;  // sample_type of the first attr (where ids are)
  int selected_ = -1;       // attr imported
  std::vector<int> seen_;   // per attr: 0 unseen, 1 selected, 2 counted in other_events
  std::vector<Queued> round_;
  uint64_t seq_ = 0;
  uint64_t last_time_ = 0;
  std::unordered_map<std::string, std::string> build_ids_;  // path -> raw build-id
  std::unordered_map<int32_t, PerfAddressSpace> spaces_;
  std::unordered_map<int32_t, ThreadState> threads_;
  std::unordered_map<int32_t, std::string> process_comms_;  // pid -> the name its samples get
  std::unordered_map<int32_t, int32_t> parents_;
  uint64_t kernel_mapping_id_ = 0;
  std::vector<model::SessionBuilder::AddressFrame> chain_;  // the current sample's frames
  std::vector<uint8_t> new_frames_;                         // per frame: a new location
  std::vector<uint64_t> frames_;
  // Sample times as the file gives them: a hostile file's may run backwards or past INT64_MAX.
  bool have_sample_time_ = false;
  uint64_t first_sample_ = 0, last_sample_ = 0;
  PerfSample sample_;
  std::string problem_;
  PerfStackUnwinder unwinder_;
  PerfWalk walk_;
};

void PerfDataImporter::Impl::add_attr(PerfAttr a) {
  if (attrs_.empty()) id_layout_ = a.sample_type;
  int index = static_cast<int>(attrs_.size());
  for (uint64_t id : a.ids) attr_by_id_.emplace(id, index);
  attrs_.push_back(std::move(a));
  seen_.push_back(0);
}

int PerfDataImporter::Impl::attr_of_sample(const PerfRecord& r) const {
  if (attrs_.size() == 1) return 0;
  uint64_t id;
  if (!sample_record_id(id_layout_, r.body, id)) return attrs_.empty() ? -1 : 0;
  auto it = attr_by_id_.find(id);
  return it == attr_by_id_.end() ? -1 : it->second;
}

int PerfDataImporter::Impl::attr_of_trailer(const PerfRecord& r) const {
  if (attrs_.empty() || !attrs_[0].sample_id_all) return -1;
  if (attrs_.size() == 1) return 0;
  uint64_t id;
  if (!trailer_record_id(id_layout_, r.body, id)) return 0;
  auto it = attr_by_id_.find(id);
  return it == attr_by_id_.end() ? 0 : it->second;
}

void PerfDataImporter::Impl::bad(const PerfRecord& r, const std::string& why) {
  if (stats_.bad_records++ == 0)
    stats_.first_problem = "record at offset " + std::to_string(r.offset) + ": " + why;
}

bool PerfDataImporter::Impl::import(std::span<const uint8_t> bytes, std::string& error) {
  PerfDataHeader h;
  if (!read_perf_data_header(bytes, h, error)) return false;
  stats_.pipe = h.pipe;
  if (h.has_feature(kFeatureCompressed)) {
    error = "its records are compressed ('perf record -z'), which gp-import does not read";
    return false;
  }
  for (PerfAttr& a : h.attrs) add_attr(std::move(a));
  read_perf_features(bytes, h, features_);
  // EVENT_DESC names the attrs of the attr section (same ids).
  for (auto& [id, name] : features_.event_names) {
    auto it = attr_by_id_.find(id);
    if (it != attr_by_id_.end() && attrs_[it->second].name.empty()) attrs_[it->second].name = name;
  }
  // Build-ids first: in pipe mode perf writes them after the samples.
  if (h.pipe) {
    PerfRecordCursor c(bytes, h.data_offset, h.data_size);
    PerfRecord r;
    while (c.next(r)) {
      if (r.type == kRecordHeaderBuildId) read_perf_build_ids(bytes.subspan(r.offset, r.body.size() + 8), features_);
      if (uint64_t extra = trailing_payload(r)) c.skip(extra);
    }
  }
  for (const PerfBuildIdEntry& e : features_.build_ids) {
    build_ids_[e.filename] = e.build_id;
    if (e.filename == "[kernel.kallsyms]" && kernel_build_id_.empty()) kernel_build_id_ = e.build_id;
  }
  reserve_lists(bytes, h);
  bool ok = walk(bytes, h, error);
  finish_header();
  stats_.bad_feature_sections = features_.bad_sections;
  stats_.missing_binaries = unwinder_.missing_binaries();
  stats_.missing = unwinder_.missing();
  return ok;
}

// Room for the samples, frames and stacks the file can make, taken once: lists grown by doubling
// were copied at each step and touched about twice their final memory (a fifth of gp-import's
// time on the bench's recording). Room not used is address space only. One entry per sample
// record is a guess for frames and stacks (a recording's distinct ones were fewer on the bench);
// they grow past it as before.
void PerfDataImporter::Impl::reserve_lists(std::span<const uint8_t> bytes,
                                           const PerfDataHeader& h) {
  constexpr size_t kMaxReserved = size_t{1} << 20;
  size_t samples = 0;
  PerfRecordCursor c(bytes, h.data_offset, h.data_size);
  PerfRecord r;
  while (c.next(r) && samples < kMaxReserved) {
    if (r.type == kRecordSample) ++samples;
    if (r.type >= 64)
      if (uint64_t extra = trailing_payload(r)) c.skip(extra);
  }
  s_.samples.reserve(std::min(samples, opt_.chunk_samples * 2));
  s_.locations.reserve(samples);
  s_.stacks.reserve(samples);
}

bool PerfDataImporter::Impl::walk(std::span<const uint8_t> bytes, const PerfDataHeader& h,
                                  std::string& error) {
  PerfRecordCursor cursor(bytes, h.data_offset, h.data_size);
  PerfRecord r;
  while (cursor.next(r)) {
    // From the first record on, so even a small input shows it has started.
    if (++stats_.records % kRecordsPerProgress == 1 && opt_.on_progress)
      opt_.on_progress(r.offset, bytes.size());
    if (r.type >= 64) {
      if (r.type == kRecordFinishedRound) {
        if (!flush_round()) return true;
      } else if (!user_record(r, error)) {
        return false;
      }
      if (uint64_t extra = trailing_payload(r)) cursor.skip(extra);
      continue;
    }
    queue(r);
  }
  if (cursor.truncated()) {
    stats_.truncated = true;
    stats_.truncated_at = cursor.stop_offset();
  } else if (!h.pipe && h.feature_table == 0) {
    // The data section was declared longer than the file: cut at a record boundary.
    stats_.truncated = true;
    stats_.truncated_at = cursor.stop_offset();
  }
  flush_round();
  return true;
}

bool PerfDataImporter::Impl::user_record(const PerfRecord& r, std::string& error) {
  std::string why;
  switch (r.type) {
    case kRecordHeaderAttr: {
      PerfAttr a;
      if (!decode_header_attr(r.body, a, why)) return bad(r, why), true;
      add_attr(std::move(a));
      return true;
    }
    case kRecordEventUpdate: {
      uint64_t id;
      std::string_view name;
      if (decode_event_name(r.body, id, name, why)) {
        auto it = attr_by_id_.find(id);
        if (it != attr_by_id_.end()) attrs_[it->second].name = std::string(name);
      } else if (!why.empty()) {
        bad(r, why);
      }
      return true;
    }
    case kRecordHeaderFeature: {
      if (r.body.size() < 8) return bad(r, "feature record shorter than its id"), true;
      const uint64_t feature = load_at<uint64_t>(r.body, 0);
      if (feature == kFeatureCompressed) {
        error = "its records are compressed ('perf record -z'), which gp-import does not read";
        return false;
      }
      if (feature != kFeatureBuildId && feature < 256)
        read_perf_feature(static_cast<unsigned>(feature), r.body.subspan(8), features_);
      for (auto& [id, name] : features_.event_names) {
        auto it = attr_by_id_.find(id);
        if (it != attr_by_id_.end() && attrs_[it->second].name.empty())
          attrs_[it->second].name = name;
      }
      return true;
    }
    case kRecordCompressed:
      error = "its records are compressed ('perf record -z'), which gp-import does not read";
      return false;
    default:
      return true;  // build-ids were read first; the rest carries nothing gp uses
  }
}

void PerfDataImporter::Impl::queue(const PerfRecord& r) {
  Queued q{0, seq_++, r, -1};
  if (r.type == kRecordSample) {
    q.attr = attr_of_sample(r);
    if (q.attr >= 0) {
      // The time is the third field at most (IDENTIFIER, IP, TID come before it).
      const PerfAttr& a = attrs_[q.attr];
      if (a.sample_type & 4) {
        size_t pos = 0;
        for (uint64_t bit : {1ULL << 16, 1ULL, 2ULL})
          if (a.sample_type & bit) pos += 8;
        if (r.body.size() >= pos + 8) q.time = load_at<uint64_t>(r.body, pos);
      }
    }
  } else {
    q.attr = attr_of_trailer(r);
    PerfSampleId sid;
    if (q.attr >= 0 && decode_sample_id(attrs_[q.attr].sample_type, r.body, sid) && sid.has_time)
      q.time = sid.time;
    else
      q.time = last_time_;  // no time: keep it where it is among its neighbours
  }
  last_time_ = q.time;
  round_.push_back(q);
}

bool PerfDataImporter::Impl::flush_round() {
  std::stable_sort(round_.begin(), round_.end(),
                   [](const Queued& a, const Queued& b) { return a.time < b.time; });
  for (const Queued& q : round_) process(q);
  round_.clear();
  if (opt_.on_chunk && s_.samples.size() >= opt_.chunk_samples) {
    finish_header();  // the first chunk writes the header
    return opt_.on_chunk();
  }
  return true;
}

void PerfDataImporter::Impl::process(const Queued& q) {
  switch (q.record.type) {
    case kRecordSample:
      on_sample(q.record, q.attr);
      break;
    case kRecordMmap:
    case kRecordMmap2:
      on_mmap(q.record);
      break;
    case kRecordComm:
      on_comm(q.record);
      break;
    case kRecordFork:
      on_fork(q.record);
      break;
    case kRecordLost: {
      uint64_t lost = 0;
      std::string why;
      if (decode_lost(q.record.body, lost, why)) stats_.lost_events += lost;
      else bad(q.record, why);
      break;
    }
    default:
      break;  // EXIT, THROTTLE, SWITCH, KSYMBOL...: nothing gp uses
  }
}

std::string PerfDataImporter::Impl::build_id_of(std::string_view path) const {
  auto it = build_ids_.find(std::string(path));
  return it == build_ids_.end() ? std::string() : it->second;
}

void PerfDataImporter::Impl::on_mmap(const PerfRecord& r) {
  PerfMmap m;
  std::string why;
  bool ok = r.type == kRecordMmap ? decode_mmap(r.body, m, why) : decode_mmap2(r.misc, r.body, m, why);
  if (!ok) return bad(r, why);
  // Kernel and module maps (pid -1): kernel frames all go to the one kernel mapping.
  if (m.pid <= 0 || (r.misc & kMiscCpumodeMask) == kMiscKernel) return;
  constexpr uint32_t kProtExec = 4;
  if (m.has_prot && !(m.prot & kProtExec)) return;
  PerfRegion region;
  region.pgoff = m.pgoff;
  region.path = std::string(m.filename);
  region.build_id = !m.build_id.empty() ? std::string(m.build_id) : build_id_of(m.filename);
  region.dev = (static_cast<uint64_t>(m.maj) << 32) | m.min;
  region.inode = m.ino;
  spaces_[m.pid].map(m.start, m.len, std::move(region));
}

ThreadState& PerfDataImporter::Impl::thread(int32_t tid) { return threads_[tid]; }

void PerfDataImporter::Impl::on_comm(const PerfRecord& r) {
  PerfComm c;
  std::string why;
  if (!decode_comm(r.misc, r.body, c, why)) return bad(r, why);
  ThreadState& t = thread(c.tid);
  t.pid = c.pid;
  t.comm = std::string(c.comm);
  t.has_comm = true;
  // The kernel sends an exec's COMM before it maps the new image: what was mapped is gone.
  if (c.exec) {
    auto space = spaces_.find(c.pid);
    if (space != spaces_.end()) space->second.clear();
  }
}

void PerfDataImporter::Impl::on_fork(const PerfRecord& r) {
  PerfTask t;
  std::string why;
  if (!decode_task(r.body, t, why)) return bad(r, why);
  // A new thread starts with its creator's name; a new process with a copy of its address space.
  auto parent = threads_.find(t.ptid);
  ThreadState& child = thread(t.tid);
  child.pid = t.pid;
  if (parent != threads_.end() && parent->second.has_comm) {
    child.comm = parent->second.comm;
    child.has_comm = true;
  }
  if (t.pid != t.ppid) {
    parents_[t.pid] = t.ppid;
    auto ps = spaces_.find(t.ppid);
    if (ps != spaces_.end()) {
      PerfAddressSpace copy;
      copy.copy_from(ps->second);
      spaces_[t.pid] = std::move(copy);
    } else {
      spaces_.erase(t.pid);
    }
  }
}

bool PerfDataImporter::Impl::select(int attr) {
  if (attr < 0) return false;
  if (seen_[attr] == 0) {
    PerfAttr& a = attrs_[attr];
    if (a.name.empty()) a.name = fallback_event_name(a);
    bool take = opt_.event.empty() ? selected_ < 0 : event_selected(opt_.event, a.name);
    if (take && selected_ < 0) {
      selected_ = attr;
      stats_.event = a.name;
    } else if (take) {
      take = a.name == attrs_[selected_].name;  // the same event on another fd group
    }
    seen_[attr] = take ? 1 : 2;
    if (!take) {
      bool listed = false;
      for (auto& [name, n] : stats_.other_events) listed |= name == a.name;
      if (!listed) stats_.other_events.emplace_back(a.name, 0);
    }
  }
  if (seen_[attr] == 1) return true;
  for (auto& [name, n] : stats_.other_events)
    if (name == attrs_[attr].name) ++n;
  return false;
}

void PerfDataImporter::Impl::add_kernel_frame(uint64_t ip, bool is_return) {
  if (kernel_mapping_id_ == 0)
    kernel_mapping_id_ = b_.mapping(record::kernel_mapping(kernel_build_id_));
  chain_.push_back({kernel_mapping_id_, ip, model::FrameKind::kernel, is_return});
}

void PerfDataImporter::Impl::add_user_frame(PerfAddressSpace* space, int32_t pid, uint64_t ip,
                                            bool is_return) {
  uint64_t mapping_id = 0;
  uint64_t start = 0;
  PerfRegion* region = space == nullptr ? nullptr : space->find(ip, start);
  if (region != nullptr) {
    if (region->mapping_id == 0) region->mapping_id = b_.mapping(archive_mapping(pid, start, *region));
    mapping_id = region->mapping_id;
  }
  chain_.push_back({mapping_id, ip, model::FrameKind::native, is_return});
}

// The name the thread's samples are taken under, and the process's (its main thread's, as perf
// script shows it); new names become Thread and Process entries.
const std::string& PerfDataImporter::Impl::note_sample_thread(int32_t pid, int32_t tid) {
  ThreadState& t = thread(tid);
  t.pid = pid;
  if (!t.has_comm) {
    t.comm.assign(1, ':');
    t.comm += std::to_string(tid);  // perf's name for a thread it has no COMM of
    t.has_comm = true;
  }
  auto [proc, new_process] = process_comms_.try_emplace(pid);
  if (!t.noted || t.noted_comm != t.comm) {
    t.noted = true;
    t.noted_comm = t.comm;
    b_.thread(tid, pid, t.comm);
    if (tid == pid || new_process) {
      proc->second = t.comm;
      model::Process p;
      p.pid = pid;
      auto parent = parents_.find(pid);
      if (parent != parents_.end()) p.ppid = parent->second;
      p.comm = t.comm;
      b_.process(p);
    }
  }
  return proc->second;
}

bool PerfDataImporter::Impl::walk_user_stack(const PerfAttr& attr, const PerfSample& smp) {
  if (!PerfStackUnwinder::wants(attr)) return false;
  auto space = spaces_.find(smp.pid);
  if (!unwinder_.unwind(attr, smp, space == spaces_.end() ? nullptr : &space->second, walk_))
    return false;
  ++stats_.walked;
  if (walk_.end == model::StackEnd::complete) ++stats_.walked_complete;
  if (walk_.end == model::StackEnd::truncated) ++stats_.walked_truncated;
  if (walk_.met_missing) ++stats_.walked_without_table;
  return true;
}

void PerfDataImporter::Impl::on_sample(const PerfRecord& r, int attr) {
  if (attr < 0) return bad(r, "sample of an event the file does not describe");
  std::string why;
  if (!decode_sample(attrs_[attr], r.body, sample_, why)) return bad(r, why);
  if (!select(attr)) return;
  const PerfSample& smp = sample_;
  // --call-graph dwarf: the user part is walked here (the kernel left it out of the callchain).
  const bool walked = walk_user_stack(attrs_[attr], smp);
  chain_.clear();
  auto found = spaces_.find(smp.pid);
  PerfAddressSpace* space = found == spaces_.end() ? nullptr : &found->second;
  size_t n = smp.callchain_size();
  if (n > 0) {
    uint64_t context = 0;
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
      uint64_t ip = smp.callchain_at(i);
      if (ip >= kContextMax) {
        context = ip;
        first = true;
        continue;
      }
      if (context == kContextKernel) add_kernel_frame(ip, !first);
      else if (context == kContextUser && !walked) add_user_frame(space, smp.pid, ip, !first);
      else continue;  // hypervisor and guest frames: not this host's code
      first = false;
    }
  } else if (smp.ip != 0) {
    bool kernel = (r.misc & kMiscCpumodeMask) == kMiscKernel;
    if (kernel) add_kernel_frame(smp.ip, false);
    else if (!walked) add_user_frame(space, smp.pid, smp.ip, false);
  }
  model::StackEnd end = model::StackEnd::unknown;
  if (walked) {
    const std::vector<uint64_t>& user = walk_.stack.frames;
    for (size_t i = 0; i < user.size(); ++i) add_user_frame(space, smp.pid, user[i], i > 0);
    end = walk_.end;
  }
  frames_.clear();
  new_frames_.clear();
  b_.address_locations(chain_, frames_, &new_frames_);
  for (size_t i = 0; i < chain_.size(); ++i)
    if (new_frames_[i] && chain_[i].kind == model::FrameKind::kernel)
      kernel_addresses_.insert(chain_[i].address);
  stats_.frames += frames_.size();
  if (smp.has_time) {
    if (!have_sample_time_) first_sample_ = last_sample_ = smp.time;
    have_sample_time_ = true;
    first_sample_ = std::min(first_sample_, smp.time);
    last_sample_ = std::max(last_sample_, smp.time);
  }
  const std::string& comm = note_sample_thread(smp.pid, smp.tid);
  uint64_t stack = b_.stack(frames_, end);
  b_.add_sample(smp.pid, smp.tid, stack, 1, smp.has_period ? smp.period : 0, -1, comm);
  ++stats_.samples;
}

void PerfDataImporter::Impl::finish_header() {
  model::Header& h = s_.header;
  h.sampling.event = stats_.event;
  if (selected_ >= 0) {
    const PerfAttr& a = attrs_[selected_];
    if (a.freq) h.sampling.frequency_hz = static_cast<uint32_t>(a.sample_period);
    else h.sampling.period = a.sample_period;
  }
  h.host.hostname = features_.hostname;
  h.host.kernel_release = features_.os_release;
  h.host.machine = features_.arch;
  h.host.cpu_count = features_.nr_cpus;
  h.host.kernel_build_id = kernel_build_id_;
  if (!features_.cmdline.empty()) h.argv = features_.cmdline;
  constexpr uint64_t kMaxNs = static_cast<uint64_t>(INT64_MAX);
  if (have_sample_time_ && last_sample_ <= kMaxNs) {
    h.monotonic_start_ns = static_cast<int64_t>(first_sample_);
    h.sampling.duration_ns = static_cast<int64_t>(last_sample_ - first_sample_);
  }
  if (stats_.lost_events > 0) s_.set_counter("perf.lost_events", static_cast<int64_t>(stats_.lost_events));
}

PerfDataImporter::PerfDataImporter(model::Session& session, PerfDataOptions options)
    : impl_(std::make_unique<Impl>(session, std::move(options))) {}
PerfDataImporter::~PerfDataImporter() = default;
bool PerfDataImporter::import(std::span<const uint8_t> bytes, std::string& error) {
  return impl_->import(bytes, error);
}
const PerfDataStats& PerfDataImporter::stats() const { return impl_->stats_; }
const std::set<uint64_t>& PerfDataImporter::kernel_addresses() const {
  return impl_->kernel_addresses_;
}
const std::string& PerfDataImporter::kernel_build_id() const { return impl_->kernel_build_id_; }
const std::string& PerfDataImporter::os_release() const { return impl_->features_.os_release; }
void PerfDataImporter::forget_samples() { impl_->forget_samples(); }

}  // namespace gp::import
