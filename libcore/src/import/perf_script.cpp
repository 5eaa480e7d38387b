#include "gp/import/perf_script.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "gp/import/perf_line.h"
#include "gp/model/builder.h"
#include "gp/model/string_table.h"
#include "import/perf_dso.h"
#include "import/perf_header.h"
#include "import/recent_frames.h"

namespace gp::import {

using model::FrameKind;
using model::SymbolStatus;

namespace {

// What one distinct frame line of one process resolved to. Its location for the sampled ip and
// its location as a return address differ only in is_return_address; the second is made lazily.
struct FrameEntry {
  uint64_t exact = 0;
  uint64_t ret = 0;
  bool kernel = false;
};

// A DSO as seen from one process: its mapping and the kind its frames get.
struct DsoEntry {
  uint64_t mapping_id = 0;
  FrameKind frame = FrameKind::native;
};

// A distinct stack, and where its first sample of the current chunk is: most stacks are
// sampled in one thread only, so that sample is the one to add to, without a second lookup.
struct StackEntry {
  uint64_t id = 0;
  uint64_t sample = 0;          // index in Session::samples
  uint32_t chunk = UINT32_MAX;  // the chunk `sample` belongs to
};

// A frame line after the current sample header, hashed ahead of its turn (see prefetch_frames).
struct AheadFrame {
  const char* text = nullptr;
  size_t size = 0;
  uint64_t hash = 0;
  uint32_t guess = 0;  // its entry as the recent-line cache told, or RecentFrames::kNone
};

// A finished sample whose stack is interned at the end of the next one (see end_sample).
struct PendingSample {
  int32_t pid = 0, tid = 0, cpu = -1;
  uint64_t period = 0;
  uint64_t hash = 0;  // of the stack key
  std::string comm;   // the process's name when sampled
};

struct ThreadInfo {
  int32_t pid = 0;
  std::string comm;
};

// The hash of a frame line's cache key (pid, text), used by both frame caches.
uint64_t frame_hash(int32_t pid, std::string_view text) {
  return model::hash_bytes(text) ^ (static_cast<uint32_t>(pid) * 0x9e3779b97f4a7c15ull);
}

}  // namespace

class PerfScriptParser::Impl {
 public:
  Impl(model::Session& s, PerfScriptOptions o) : s_(s), b_(s), opt_(std::move(o)) {
    s_.header.source = model::SourceKind::imported;
  }

  void feed(std::string_view bytes);
  void finish();
  void reserve(size_t locations, size_t n) {
    s_.locations.reserve(std::max(s_.locations.capacity(), locations));
    s_.stacks.reserve(std::max(s_.stacks.capacity(), n));
    s_.samples.reserve(std::max(s_.samples.capacity(), n));
  }
  void forget_samples() {  // between feeds, so no sample is pending
    b_.forget_samples();
    sample_index_.clear();
    ++chunk_;
  }
  PerfScriptStats stats_;

 private:
  void on_line(std::string_view line);
  bool on_frame_line(std::string_view line);
  void begin_sample(const PerfSampleHeader& h);
  void end_sample();
  void flush_sample();
  void add_sample(StackEntry& stack, const PendingSample& smp);
  void prefetch_frames();
  uint64_t frame_line_hash(std::string_view text);
  bool select_event(std::string_view event);
  void note_thread(int32_t pid, int32_t tid, std::string_view comm);
  void skip_line();
  uint32_t resolve_frame(const PerfFrame& f, uint64_t hash);
  uint64_t make_location(const PerfFrame& f, bool is_return);
  const DsoEntry& dso_entry(std::string_view dso);

  model::Session& s_;
  model::SessionBuilder b_;
  PerfScriptOptions opt_;
  std::string partial_;
  std::string_view ahead_;   // the bytes after the line being parsed, in the current feed
  bool discarding_ = false;  // inside an over-long line

  // The sample being read.
  bool in_sample_ = false;
  bool accept_ = false;
  int32_t pid_ = 0, tid_ = 0, cpu_ = -1;
  uint64_t period_ = 0;
  bool prev_kernel_ = false;
  std::vector<uint64_t> frames_;

  int64_t first_time_ = -1, last_time_ = -1;
  std::vector<PerfEventAttr> event_attrs_;
  std::string key_;                             // reused lookup key: no allocation on cache hits
  std::vector<FrameEntry> frame_entries_;       // distinct frame lines, in first-seen order
  model::StringTable<uint32_t> frame_cache_;    // (pid, frame line text) → frame entry
  RecentFrames recent_frames_;                  // the same, for recent lines (stays in L2)
  model::StringTable<StackEntry> stack_cache_;  // leaf-first location ids → stack
  static constexpr size_t kAhead = 64;
  AheadFrame ahead_frames_[kAhead];
  size_t ahead_count_ = 0, ahead_next_ = 0;
  bool sample_pending_ = false;
  PendingSample pending_;
  std::vector<uint64_t> pending_frames_;
  model::StringTable<size_t>
      sample_index_;  // (pid, tid, stack id, comm) → sample, for the other threads
  std::string sample_key_;
  uint32_t chunk_ = 0;
  model::StringTable<uint64_t> function_cache_;  // symbol → function id
  model::StringTable<DsoEntry> dso_cache_;       // (pid, DSO text) → mapping and frame kind
  std::string dso_key_;
  std::unordered_map<int32_t, ThreadInfo> threads_;
  std::unordered_map<int32_t, std::string> process_comms_;  // pid → its name now
  const std::string* comm_ = nullptr;  // the current sample's process name (in process_comms_)
};

void PerfScriptParser::Impl::feed(std::string_view bytes) {
  stats_.bytes += bytes.size();
  while (!bytes.empty()) {
    const char* nl = static_cast<const char*>(std::memchr(bytes.data(), '\n', bytes.size()));
    size_t len = nl ? static_cast<size_t>(nl - bytes.data()) : bytes.size();
    std::string_view piece = bytes.substr(0, len);
    bytes.remove_prefix(nl ? len + 1 : len);
    ahead_ = bytes;
    if (!nl) {  // keep the start of a line that continues in the next feed
      if (!discarding_ && partial_.size() + piece.size() > opt_.max_line_bytes) {
        discarding_ = true;
        partial_.clear();
      }
      if (!discarding_) partial_.append(piece);
      break;
    }
    if (discarding_) {
      discarding_ = false;
      ++stats_.lines;
      skip_line();
      continue;
    }
    if (partial_.empty()) {
      on_line(piece);
    } else {
      partial_.append(piece);
      on_line(partial_);
      partial_.clear();
    }
  }
  // The caller may reuse its buffer: lines hashed ahead must not be matched by address later.
  ahead_ = {};
  ahead_count_ = ahead_next_ = 0;
  // Samples go out complete with each feed: a caller may write a chunk between feeds.
  flush_sample();
}

void PerfScriptParser::Impl::finish() {
  if (discarding_) {
    ++stats_.lines;
    skip_line();
  } else if (!partial_.empty()) {
    // A last line without '\n': perf always ends lines, so this is a cut input; still use it.
    std::string last = std::move(partial_);
    partial_.clear();
    on_line(last);
  }
  discarding_ = false;
  end_sample();
  flush_sample();
  s_.header.sampling.event = stats_.event;
  apply_event_attrs(event_attrs_, s_.header.sampling);
  if (first_time_ >= 0) {
    s_.header.monotonic_start_ns = first_time_;
    if (s_.header.sampling.duration_ns == 0)
      s_.header.sampling.duration_ns = last_time_ - first_time_;
  }
}

void PerfScriptParser::Impl::skip_line() {
  if (stats_.skipped_lines++ == 0) stats_.first_skipped_line = stats_.lines;
}

void PerfScriptParser::Impl::on_line(std::string_view line) {
  ++stats_.lines;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {
    end_sample();
    return;
  }
  if (line.front() == '#') {
    std::string_view key, value;
    if (parse_header_comment(line, key, value))
      apply_header_comment(key, value, s_.header, event_attrs_);
    return;
  }
  // perf starts every call-chain line with a tab and sample headers never do: the fast path.
  if (line.front() == '\t' && in_sample_ && on_frame_line(line)) return;
  PerfSampleHeader h;
  bool header = parse_sample_header(line, h);
  // Re-indented text (spaces, spaces then a tab, nothing): a header that names its event is
  // certain; otherwise a line inside a sample that reads as a frame is one. A header without an
  // event (`-F` without it) still wins over a frame without a DSO, which perf never prints.
  if (line.front() != '\t' && in_sample_ && !(header && !h.event.empty())) {
    PerfFrame f;
    if (parse_frame_line(line, f) && !(header && f.dso.empty()) && on_frame_line(line)) return;
  }
  if (header) {
    begin_sample(h);
    return;
  }
  skip_line();
}

bool PerfScriptParser::Impl::on_frame_line(std::string_view line) {
  if (!accept_) return true;  // a frame of an event we do not import
  // (Not find_first_not_of: libstdc++ runs a memchr per character for it.)
  size_t start = 0;
  while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
  if (start == line.size()) return false;
  std::string_view text = line.substr(start);
  uint64_t hash = frame_line_hash(text);
  uint32_t index = recent_frames_.find(hash, pid_, text);
  if (index == RecentFrames::kNone) {
    key_.assign(reinterpret_cast<const char*>(&pid_), sizeof pid_);
    key_.append(text);
    if (uint32_t* found = frame_cache_.find(key_, hash)) {
      index = *found;
    } else {
      PerfFrame f;
      if (!parse_frame_line(text, f)) return false;
      index = resolve_frame(f, hash);
    }
    recent_frames_.put(hash, pid_, text, index);
  }
  FrameEntry* e = &frame_entries_[index];
  // The first frame of each context (kernel, then user) is the interrupted ip; the others are
  // return addresses.
  bool context_leaf = frames_.empty() || (prev_kernel_ && !e->kernel);
  uint64_t id = e->exact;
  if (!context_leaf) {
    if (e->ret == 0) {
      PerfFrame f;
      parse_frame_line(text, f);
      e->ret = make_location(f, true);
    }
    id = e->ret;
  }
  prev_kernel_ = e->kernel;
  frames_.push_back(id);
  ++stats_.frames;
  return true;
}

// The cache hash of a frame line of the current sample: computed ahead by prefetch_frames when
// the line was in view then.
uint64_t PerfScriptParser::Impl::frame_line_hash(std::string_view text) {
  while (ahead_next_ < ahead_count_ && ahead_frames_[ahead_next_].text < text.data()) ++ahead_next_;
  if (ahead_next_ < ahead_count_) {
    const AheadFrame& a = ahead_frames_[ahead_next_];
    if (a.text == text.data() && a.size == text.size()) return a.hash;
  }
  return frame_hash(pid_, text);
}

// Called on a sample header: hashes the frame lines that follow it in the current feed and asks
// for the memory their lookups will read (cache slots, then the big table's key bytes), so the
// lookups of a whole call chain overlap instead of waiting for memory one after the other.
void PerfScriptParser::Impl::prefetch_frames() {
  ahead_count_ = ahead_next_ = 0;
  std::string_view rest = ahead_;
  while (ahead_count_ < kAhead && !rest.empty() && rest.front() == '\t') {
    const char* nl = static_cast<const char*>(std::memchr(rest.data(), '\n', rest.size()));
    if (nl == nullptr) break;
    std::string_view line(rest.data(), static_cast<size_t>(nl - rest.data()));
    rest.remove_prefix(line.size() + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t start = 0;
    while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
    std::string_view text = line.substr(start);
    uint64_t hash = frame_hash(pid_, text);
    // The recent-line cache stays in L2: read it now. Its hits need their frame entry; the
    // others a slot of the big table, then their key bytes there (second loop).
    uint32_t guess = recent_frames_.guess(hash, pid_, text.size());
    if (guess != RecentFrames::kNone) __builtin_prefetch(&frame_entries_[guess]);
    else frame_cache_.prefetch(hash);
    ahead_frames_[ahead_count_++] = {text.data(), text.size(), hash, guess};
  }
  for (size_t i = 0; i < ahead_count_; ++i)
    if (ahead_frames_[i].guess == RecentFrames::kNone)
      frame_cache_.prefetch_key(ahead_frames_[i].hash);
}

// Interns a frame seen for the first time in this process; key_ holds its cache key.
uint32_t PerfScriptParser::Impl::resolve_frame(const PerfFrame& f, uint64_t hash) {
  FrameEntry e;
  e.exact = make_location(f, false);
  e.kernel = s_.location(e.exact).kind == FrameKind::kernel;
  auto index = static_cast<uint32_t>(frame_entries_.size());
  frame_entries_.push_back(e);
  frame_cache_.insert(key_, hash, index);
  return index;
}

uint64_t PerfScriptParser::Impl::make_location(const PerfFrame& f, bool is_return) {
  model::Location loc;
  loc.address = f.address;
  loc.is_return_address = is_return;
  loc.kind = FrameKind::native;
  if (!is_unknown_dso(f.dso)) {
    const DsoEntry& d = dso_entry(f.dso);
    loc.kind = d.frame;
    loc.mapping_id = d.mapping_id;
  }
  if (!f.symbol.empty() && f.symbol != "[unknown]") {
    // The builder interns functions too; this cache spares it a key per frame of a known symbol.
    auto [fn, inserted] = function_cache_.try_insert(f.symbol, 0);
    if (inserted) *fn = b_.function(f.symbol);
    loc.lines.push_back({*fn, 0, 0, false});
    loc.status = SymbolStatus::symbolic;
  } else {
    loc.status = loc.mapping_id != 0 ? SymbolStatus::unsymbolized : SymbolStatus::unmapped;
  }
  s_.locations.push_back(std::move(loc));
  return s_.locations.size();
}

// The mapping of a DSO in the current process (kernel-space DSOs: one mapping for all, pid 0).
const DsoEntry& PerfScriptParser::Impl::dso_entry(std::string_view dso) {
  dso_key_.assign(reinterpret_cast<const char*>(&pid_), sizeof pid_);
  dso_key_.append(dso);
  if (DsoEntry* e = dso_cache_.find(dso_key_)) return *e;
  DsoClass c = classify_dso(dso);
  model::Mapping m;
  m.pid = c.kernel_space ? 0 : pid_;
  m.path = std::string(dso);
  m.kind = c.mapping;
  return dso_cache_.insert(dso_key_, {b_.mapping(m), c.frame});
}

void PerfScriptParser::Impl::begin_sample(const PerfSampleHeader& h) {
  end_sample();
  if (h.event.substr(0, 12) == "PERF_RECORD_") {  // --show-*-events side-band lines
    ++stats_.side_band_records;
    return;
  }
  in_sample_ = true;
  accept_ = select_event(h.event);
  if (!accept_) return;
  if (h.pid < 0) ++stats_.samples_without_pid;
  pid_ = h.pid >= 0 ? h.pid : h.tid;
  tid_ = h.tid;
  cpu_ = h.cpu;
  period_ = h.period;
  prev_kernel_ = false;
  frames_.clear();
  if (h.time_ns >= 0) {
    if (first_time_ < 0) first_time_ = h.time_ns;
    last_time_ = h.time_ns;
  }
  prefetch_frames();
  if (sample_pending_) stack_cache_.prefetch_key(pending_.hash);
  note_thread(pid_, tid_, h.comm);
  // Without a call chain perf prints the sampled ip on the header line itself.
  if (!h.rest.empty()) {
    on_frame_line(h.rest);  // tracepoint payloads are not frames and are ignored
  }
}

bool PerfScriptParser::Impl::select_event(std::string_view event) {
  if (event.empty()) return true;  // -F without event: every sample counts
  bool selected;
  if (!opt_.event.empty()) {
    selected = event_selected(opt_.event, event);
    if (selected && stats_.event.empty()) stats_.event = std::string(event);
  } else {
    if (stats_.event.empty()) stats_.event = std::string(event);
    selected = event == stats_.event;
  }
  if (selected) return true;
  for (auto& [name, n] : stats_.other_events) {
    if (name == event) {
      ++n;
      return false;
    }
  }
  stats_.other_events.emplace_back(std::string(event), 1);
  return false;
}

void PerfScriptParser::Impl::note_thread(int32_t pid, int32_t tid, std::string_view comm) {
  auto [it, inserted] = threads_.try_emplace(tid);
  auto [proc, new_process] = process_comms_.try_emplace(pid);
  comm_ = &proc->second;
  if (!inserted && it->second.pid == pid && it->second.comm == comm) return;
  it->second = {pid, std::string(comm)};
  b_.thread(tid, pid, comm);
  // The process takes its main thread's name (perf prints the new one from its exec on); until
  // that thread is seen, the first thread's. Samples keep the name of their time.
  if (tid == pid || new_process) {
    proc->second = std::string(comm);
    model::Process p;
    p.pid = pid;
    p.comm = std::string(comm);
    b_.process(p);
  }
}

// A finished sample's stack is looked up one sample later: its slot in the (big) stack table is
// prefetched now and has arrived by then. Stacks and samples come out in the same order.
void PerfScriptParser::Impl::end_sample() {
  if (!in_sample_) return;
  in_sample_ = false;
  if (!accept_) return;
  flush_sample();
  pending_.pid = pid_;
  pending_.tid = tid_;
  pending_.cpu = cpu_;
  pending_.period = period_;
  pending_.comm.assign(*comm_);
  pending_frames_.swap(frames_);
  pending_.hash = model::hash_bytes({reinterpret_cast<const char*>(pending_frames_.data()),
                                     pending_frames_.size() * sizeof(uint64_t)});
  stack_cache_.prefetch(pending_.hash);
  sample_pending_ = true;
  ++stats_.samples;
}

void PerfScriptParser::Impl::flush_sample() {
  if (!sample_pending_) return;
  sample_pending_ = false;
  // Stacks and samples are interned here, not by the builder (which this parser never asks for
  // either): its string keys cost an allocation per sample.
  std::string_view frames_key(reinterpret_cast<const char*>(pending_frames_.data()),
                              pending_frames_.size() * sizeof(uint64_t));
  StackEntry* stack = stack_cache_.find(frames_key, pending_.hash);
  if (stack == nullptr) {
    s_.stacks.push_back({pending_frames_});
    stack = &stack_cache_.insert(frames_key, pending_.hash, {s_.stacks.size()});
  }
  add_sample(*stack, pending_);
}

// Samples are summed per (pid, tid, stack), not per CPU: a stack that ran on several CPUs is one
// sample with cpu -1 (formats/README.md §4.3), which keeps recordings of busy machines small.
void PerfScriptParser::Impl::add_sample(StackEntry& stack, const PendingSample& p) {
  size_t at;
  if (stack.chunk != chunk_) {  // the stack's first sample in this chunk
    stack.chunk = chunk_;
    stack.sample = s_.samples.size();
    at = stack.sample;
  } else if (const model::Sample& first = s_.samples[stack.sample];
             first.pid == p.pid && first.tid == p.tid && first.comm == p.comm) {
    at = stack.sample;
  } else {  // a stack seen in another thread (or under another name) first
    char key[16];
    std::memcpy(key, &p.pid, 4);
    std::memcpy(key + 4, &p.tid, 4);
    std::memcpy(key + 8, &stack.id, 8);
    sample_key_.assign(key, sizeof key);
    sample_key_.append(p.comm);
    auto [index, inserted] = sample_index_.try_insert(sample_key_, s_.samples.size());
    at = *index;
  }
  if (at == s_.samples.size()) {
    s_.samples.push_back({p.pid, p.tid, stack.id, 1, p.cpu, p.period, p.comm});
    return;
  }
  model::Sample& smp = s_.samples[at];
  smp.count += 1;
  smp.weight += p.period;
  if (smp.cpu != p.cpu) smp.cpu = -1;
}

PerfScriptParser::PerfScriptParser(model::Session& session, PerfScriptOptions options)
    : impl_(std::make_unique<Impl>(session, std::move(options))) {}
PerfScriptParser::~PerfScriptParser() = default;
void PerfScriptParser::feed(std::string_view bytes) { impl_->feed(bytes); }

// Lists grown by doubling move every entry at each step and touch about twice their final memory
// (on the import bench's 80 MB of text: a fifth of gp-import's time). One stack or sample per 512
// bytes is about what a system-wide recording makes (80 bytes a frame line, a new stack every few
// samples); locations are denser, one per 215 bytes on the bench's text (each new frame line
// makes one), so their room is one per 160 bytes. The cap keeps a list of 64-byte entries
// (locations) on the heap, below glibc's 32 MiB mmap threshold. Room not used is address space
// only.
void PerfScriptParser::reserve_for(uint64_t bytes) {
  constexpr uint64_t kBytesPerEntry = 512;
  constexpr uint64_t kBytesPerLocation = 160;
  constexpr uint64_t kMaxEntries = (uint64_t{1} << 19) - 1024;
  auto room = [&](uint64_t per) { return static_cast<size_t>(std::min(bytes / per, kMaxEntries)); };
  impl_->reserve(room(kBytesPerLocation), room(kBytesPerEntry));
}
void PerfScriptParser::finish() { impl_->finish(); }
const PerfScriptStats& PerfScriptParser::stats() const { return impl_->stats_; }
void PerfScriptParser::forget_samples() { impl_->forget_samples(); }

PerfScriptStats import_perf_script(std::string_view text, model::Session& session,
                                   const PerfScriptOptions& options) {
  PerfScriptParser parser(session, options);
  parser.feed(text);
  parser.finish();
  return parser.stats();
}

bool looks_like_perf_data(std::string_view first_bytes) {
  return first_bytes.substr(0, 8) == "PERFILE2";
}

}  // namespace gp::import
