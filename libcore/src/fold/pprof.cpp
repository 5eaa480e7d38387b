// Archive → pprof profile.proto. Tables (strings, mappings, locations, functions) live in
// pprof_tables.cpp; this file writes samples as it meets them and then the profile's header
// fields. Top-level fields may come in any order on the wire, so samples stream out first
// and the tables, which only grow while samples are added, follow.
#include "gp/fold/pprof.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_map>

#include "fold/pprof_tables.h"
#include "fold/protobuf_writer.h"
#include "gp/fold/gzip.h"
#include "gp/fold/stacks.h"
#include "gp/util/version.h"

namespace gp::fold {

namespace {

// Profile fields (github.com/google/pprof proto/profile.proto).
constexpr uint32_t kSampleType = 1, kSample = 2, kTimeNanos = 9, kDurationNanos = 10,
                   kPeriodType = 11, kPeriod = 12, kComment = 13;
constexpr uint32_t kValueTypeType = 1, kValueTypeUnit = 2;
constexpr uint32_t kSampleLocation = 1, kSampleValue = 2, kSampleLabel = 3;
constexpr uint32_t kLabelKey = 1, kLabelStr = 2, kLabelNum = 3;

constexpr size_t kFlushBytes = 1 << 20;
constexpr int64_t kNanosPerSecond = 1'000'000'000;

using Sink = std::function<Status(std::string_view)>;

// How one session's samples turn into the profile's second value: nanoseconds of CPU time for
// clock events, else the event's own count (the summed period perf recorded, e.g. page faults).
struct SessionClock {
  bool clock_event = false;  // cpu-clock/task-clock: Sample.weight is nanoseconds
  int64_t period_ns = 0;     // per sample; 0 when unknown
  bool has_ns = false;       // every sample of the session gets a value
  std::string type = "cpu", unit = "nanoseconds";
};

bool all_weighted(const model::Session& s) {
  return !s.samples.empty() && std::all_of(s.samples.begin(), s.samples.end(),
                                           [](const model::Sample& x) { return x.weight > 0; });
}

SessionClock session_clock(const model::Session& s) {
  const model::Sampling& sampling = s.header.sampling;
  SessionClock c;
  // perf appends the modifiers it chose: "cpu-clock:ppp" is cpu-clock.
  const std::string event = sampling.event.substr(0, sampling.event.find(':'));
  c.clock_event = event.empty() || event == "cpu-clock" || event == "task-clock";
  if (!c.clock_event) {
    // A period of another event counts that event, not time: only per-sample weights say it.
    c.type = event;
    c.unit = "count";
    c.has_ns = all_weighted(s);
    return c;
  }
  if (sampling.frequency_hz > 0) {
    c.period_ns = kNanosPerSecond / sampling.frequency_hz;
  } else if (sampling.period > 0) {
    c.period_ns = static_cast<int64_t>(sampling.period);
  }
  c.has_ns = c.period_ns > 0 || all_weighted(s);
  return c;
}

int64_t sample_ns(const SessionClock& c, const model::Sample& s) {
  if (s.weight > 0) return static_cast<int64_t>(s.weight);
  return static_cast<int64_t>(s.count) * c.period_ns;
}

class Encoder {
 public:
  Encoder(Sink sink, const PprofOptions& options) : sink_(std::move(sink)), options_(options) {}
  Status encode(const model::Archive& archive);

 private:
  Status add_session(const model::Session& s, const SessionClock& clock);
  Status add_sample(const model::Session& s, pprof::SessionIds& ids, const SessionClock& clock,
                    const model::Sample& sample);
  const std::string& process_labels(const model::Session& s, const model::Sample& sample);
  void write_header(const model::Archive& archive, const std::vector<SessionClock>& clocks);
  void value_type(uint32_t field, std::string_view type, std::string_view unit);
  void str_label(proto::ProtoWriter& out, std::string_view key, std::string_view value);
  void num_label(proto::ProtoWriter& out, std::string_view key, int64_t value);
  Status flush(bool force);

  Sink sink_;
  PprofOptions options_;
  pprof::Tables tables_;
  proto::ProtoWriter out_;
  bool with_ns_ = false;
  std::unordered_map<std::string, std::string> label_cache_;  // per (pid, tid, comm) in a session
  std::vector<uint64_t> location_ids_;
};

Status Encoder::flush(bool force) {
  if (out_.size() < kFlushBytes && !force) return ok_status();
  auto st = sink_(out_.bytes());
  out_.clear();
  return st;
}

Status Encoder::encode(const model::Archive& archive) {
  std::vector<SessionClock> clocks;
  with_ns_ = true;
  for (const model::Session& s : archive.sessions) clocks.push_back(session_clock(s));
  const SessionClock* kind = nullptr;  // the first session with samples names the value
  for (size_t i = 0; i < clocks.size(); ++i) {
    if (archive.sessions[i].samples.empty()) continue;
    const SessionClock& c = clocks[i];
    if (!c.has_ns) with_ns_ = false;
    if (kind == nullptr) kind = &c;
    else if (kind->type != c.type || kind->unit != c.unit) with_ns_ = false;  // unlike values
  }
  for (size_t i = 0; i < archive.sessions.size(); ++i) {
    if (auto st = add_session(archive.sessions[i], clocks[i]); !st) {
      if (archive.sessions.size() == 1) return st;
      return make_error("session " + std::to_string(i + 1) + ": " + st.error().message);
    }
  }
  write_header(archive, clocks);
  tables_.write(out_);
  return flush(true);
}

Status Encoder::add_session(const model::Session& s, const SessionClock& clock) {
  pprof::SessionIds ids(s);
  label_cache_.clear();
  for (const model::Sample& sample : s.samples) {
    if (sample.count == 0) continue;
    if (auto st = add_sample(s, ids, clock, sample); !st) return st;
    if (auto st = flush(false); !st) return st;
  }
  return ok_status();
}

Status Encoder::add_sample(const model::Session& s, pprof::SessionIds& ids,
                           const SessionClock& clock, const model::Sample& sample) {
  if (sample.stack_id == 0 || sample.stack_id > s.stacks.size()) {
    return make_error("sample refers to stack " + std::to_string(sample.stack_id) + " of " +
                      std::to_string(s.stacks.size()));
  }
  location_ids_.clear();
  const model::Stack& stack = s.stack(sample.stack_id);
  for (uint64_t id : stack.location_ids) {  // leaf first, as in pprof
    auto pprof_id = tables_.location(s, ids, id);
    if (!pprof_id) return pprof_id.error();
    location_ids_.push_back(*pprof_id);
  }
  // A cut stack's outermost frame is no root: the marker stands above it.
  if (options_.truncated_marker && stack.end == model::StackEnd::truncated)
    location_ids_.push_back(tables_.pseudo_location(kTruncatedFrame));
  int64_t values[2] = {static_cast<int64_t>(sample.count), sample_ns(clock, sample)};
  proto::ProtoWriter m;
  m.packed_varints(kSampleLocation, location_ids_);
  m.packed_varints(kSampleValue, std::span<const int64_t>(values, with_ns_ ? 2 : 1));
  m.append_encoded(process_labels(s, sample));
  out_.message_field(kSample, m);
  return ok_status();
}

// Encoded Label fields for a (pid, tid, comm) of a session, built once.
const std::string& Encoder::process_labels(const model::Session& s, const model::Sample& sample) {
  const int32_t pid = sample.pid, tid = sample.tid;
  std::string key(reinterpret_cast<const char*>(&pid), sizeof pid);
  key.append(reinterpret_cast<const char*>(&tid), sizeof tid);
  key.append(sample.comm);
  auto it = label_cache_.find(key);
  if (it != label_cache_.end()) return it->second;
  proto::ProtoWriter labels;
  // Text inputs (.col, folded) have no pids: their sessions number processes 1, 2, ... and
  // those made-up ids would read as real ones.
  if (s.header.source != model::SourceKind::folded) {
    num_label(labels, "pid", pid);
    num_label(labels, "tid", tid);
  }
  const model::Process* p = s.find_process(pid);
  // The comm the sample was taken under, else the process's, else the thread's.
  std::string_view comm = !sample.comm.empty() ? std::string_view(sample.comm)
                          : p != nullptr       ? std::string_view(p->comm)
                                               : std::string_view();
  if (comm.empty()) {
    for (const model::Thread& t : s.threads) {
      if (t.tid == tid && !t.comm.empty()) comm = t.comm;  // the newest entry wins
    }
  }
  if (!comm.empty()) str_label(labels, "comm", comm);
  if (p != nullptr) {
    const std::string& container = p->container_name.empty() ? p->container_id : p->container_name;
    if (!container.empty()) str_label(labels, "container", container);
    if (!p->appid.empty()) str_label(labels, "appid", p->appid);
  }
  return label_cache_.emplace(key, labels.bytes()).first->second;
}

void Encoder::str_label(proto::ProtoWriter& out, std::string_view key, std::string_view value) {
  proto::ProtoWriter l;
  l.varint_field(kLabelKey, tables_.string(key));
  l.varint_field(kLabelStr, tables_.string(value));
  out.message_field(kSampleLabel, l);
}

void Encoder::num_label(proto::ProtoWriter& out, std::string_view key, int64_t value) {
  proto::ProtoWriter l;
  l.varint_field(kLabelKey, tables_.string(key));
  l.int64_field(kLabelNum, value);
  out.message_field(kSampleLabel, l);
}

void Encoder::value_type(uint32_t field, std::string_view type, std::string_view unit) {
  proto::ProtoWriter v;
  v.varint_field(kValueTypeType, tables_.string(type));
  v.varint_field(kValueTypeUnit, tables_.string(unit));
  out_.message_field(field, v);
}

// sample_type, period, time and duration. "samples/count" comes first, as profile.proto asks
// of a value that counts events; the last type (cpu) is pprof's default view.
void Encoder::write_header(const model::Archive& archive, const std::vector<SessionClock>& clocks) {
  value_type(kSampleType, "samples", "count");
  const model::Session* first = archive.sessions.empty() ? nullptr : &archive.sessions.front();
  const SessionClock* kind = nullptr;
  for (size_t i = 0; i < archive.sessions.size() && kind == nullptr; ++i)
    if (!archive.sessions[i].samples.empty()) kind = &clocks[i];
  if (with_ns_ && kind != nullptr) {
    value_type(kSampleType, kind->type, kind->unit);
    value_type(kPeriodType, kind->type, kind->unit);
    int64_t period = clocks.empty() ? 0 : clocks.front().period_ns;
    if (period == 0 && first != nullptr && first->total_samples() > 0) {
      int64_t ns = 0;  // weights only: the mean sample length
      for (const model::Sample& x : first->samples) ns += sample_ns(clocks.front(), x);
      period = ns / static_cast<int64_t>(first->total_samples());
    }
    out_.int64_field(kPeriod, period);
  } else {
    const std::string& event = first != nullptr ? first->header.sampling.event : std::string();
    value_type(kPeriodType, event.empty() ? "samples" : event, "count");
    uint64_t period = first != nullptr ? first->header.sampling.period : 0;
    out_.int64_field(kPeriod, period > 0 ? static_cast<int64_t>(period) : 1);
  }
  int64_t start = 0;
  int64_t end = 0;
  for (const model::Session& s : archive.sessions) {
    int64_t t0 = s.header.start_time_ns;
    if (t0 <= 0) continue;
    start = start == 0 ? t0 : std::min(start, t0);
    int64_t t1 = s.trailer && s.trailer->end_time_ns > 0 ? s.trailer->end_time_ns
                                                         : t0 + s.header.sampling.duration_ns;
    end = std::max(end, t1);
  }
  // time_nanos only once: a second one tells Go's parser that profiles were concatenated.
  if (start > 0) out_.int64_field(kTimeNanos, start);
  if (end > start) out_.int64_field(kDurationNanos, end - start);
  uint64_t comment = tables_.string(std::string("gp ") + kVersion);
  out_.packed_varints(kComment, std::span<const uint64_t>(&comment, 1));
}

}  // namespace

Status write_pprof(const model::Archive& archive, std::ostream& out, const PprofOptions& options) {
  GzipWriter gz(out, 1);  // BestSpeed, as Go's runtime/pprof writes its profiles
  Encoder encoder([&](std::string_view bytes) { return gz.write(bytes); }, options);
  if (auto st = encoder.encode(archive); !st) return st;
  return gz.finish();
}

Result<std::string> encode_pprof(const model::Archive& archive, const PprofOptions& options) {
  std::string bytes;
  Encoder encoder(
      [&](std::string_view b) {
        bytes.append(b);
        return ok_status();
      },
      options);
  if (auto st = encoder.encode(archive); !st) return st.error();
  return bytes;
}

}  // namespace gp::fold
