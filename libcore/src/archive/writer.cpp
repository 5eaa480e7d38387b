#include "gp/archive/writer.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstring>

#include "codec.h"

namespace gp::archive {
namespace {

// Rough encoded sizes, used only to cut chunks near the target size.
size_t estimate(const model::Process& p) {
  size_t n = 160 + p.comm.size() + p.exe.size() + p.cgroup.size() + p.app_metadata_json.size() +
             p.appid.size();
  for (const auto& a : p.cmdline) n += a.size() + 16;
  return n;
}
size_t estimate(const model::Thread& t) { return 40 + t.comm.size(); }
size_t estimate(const model::Mapping& m) { return 96 + m.path.size() + m.build_id.size(); }
size_t estimate(const model::Function& f) {
  return 56 + f.name.size() + f.system_name.size() + f.file_name.size() + f.package.size();
}
size_t estimate(const model::Location& l) { return 64 + 24 * l.lines.size(); }
size_t estimate(const model::Stack& s) { return 24 + 8 * s.location_ids.size(); }
size_t estimate(const model::Sample&) { return 48; }
size_t estimate(const model::KernelSymbol& k) { return 40 + k.name.size() + k.module.size(); }
size_t estimate(const model::JitMap& j) {
  size_t n = 48 + j.path.size();
  for (const auto& e : j.entries) n += 40 + e.name.size();
  return n;
}
size_t estimate(const model::StackCopy& c) { return 64 + c.stack.size() + 8 * c.registers.size(); }
size_t estimate(const model::LocationUpdate& u) { return 40 + 24 * u.lines.size(); }

// Takes entries [from, end) of `table` into `range` while `budget` lasts; at least one entry
// when the chunk is still empty so that oversized entries still make progress. Once a table
// stops short (`full`), later tables take nothing: their entries may refer to the ones left out.
template <typename T, typename Index>
void take(const std::vector<T>& table, Index& from, size_t (&range)[2], size_t& budget, bool& any,
          bool& full) {
  range[0] = range[1] = from;
  while (!full && from < table.size()) {
    size_t cost = estimate(table[from]);
    if (cost > budget && any) {
      full = true;
      break;
    }
    budget = cost > budget ? 0 : budget - cost;
    ++from;
    range[1] = from;
    any = true;
  }
}

// capnp's writer over an OutputStream: a message's segment table and segments go out as they are,
// without a flat copy of the whole message first.
class Sink final : public kj::OutputStream {
 public:
  explicit Sink(archive::OutputStream& out) : out_(out) {}
  void write(const void* buffer, size_t size) override {
    if (status && size > 0) status = out_.write(buffer, size);
  }
  Status status = ok_status();

 private:
  archive::OutputStream& out_;
};

Status write_message(OutputStream& out, capnp::MallocMessageBuilder& builder) {
  Sink sink(out);
  capnp::writeMessage(sink, builder);
  return sink.status;
}

}  // namespace

Status Writer::begin_session(model::Session& s) {
  written_ = {};
  chunks_ = 0;
  samples_ = 0;
  if (s.header.producer.empty()) s.header.producer = opt_.producer;
  if (s.header.producer_version.empty()) s.header.producer_version = opt_.producer_version;
  capnp::MallocMessageBuilder builder;
  codec::fill_header(builder.initRoot<schema::Message>().initHeader(), s.header);
  auto st = write_message(out_, builder);
  if (!st) return st;
  return out_.flush();
}

Status Writer::write_chunk(model::Session& s) { return write_lists(s, written_); }

Status Writer::write_delta(ChunkDelta& delta) {
  if (!(delta.base == written_))
    return make_error("chunk delta does not follow the entries written so far (ids would shift)");
  Cursor from;
  auto st = write_lists(delta.entries, from);
  written_ = written_.plus(delta.entries);
  delta.entries = {};
  return st;
}

Status Writer::write_lists(model::Session& s, Cursor& from) {
  size_t samples_from = 0, copies_from = 0, updates_from = 0;
  bool counters_pending = !s.counters.empty();
  for (;;) {
    codec::ChunkRanges r;
    size_t budget = opt_.chunk_bytes;
    bool any = false;
    bool full = false;
    take(s.processes, from.processes, r.processes, budget, any, full);
    take(s.threads, from.threads, r.threads, budget, any, full);
    take(s.mappings, from.mappings, r.mappings, budget, any, full);
    take(s.functions, from.functions, r.functions, budget, any, full);
    take(s.locations, from.locations, r.locations, budget, any, full);
    take(s.location_updates, updates_from, r.location_updates, budget, any, full);
    take(s.stacks, from.stacks, r.stacks, budget, any, full);
    take(s.samples, samples_from, r.samples, budget, any, full);
    take(s.kernel_symbols, from.kernel_symbols, r.kernel_symbols, budget, any, full);
    take(s.jit_maps, from.jit_maps, r.jit_maps, budget, any, full);
    take(s.stack_copies, copies_from, r.stack_copies, budget, any, full);
    if (!any && !counters_pending) break;
    r.with_counters = counters_pending;
    counters_pending = false;
    for (size_t i = r.samples[0]; i < r.samples[1]; ++i) samples_ += s.samples[i].count;

    // One first segment large enough for the whole chunk keeps the message single-segment.
    const size_t words = (opt_.chunk_bytes - budget) / 8 + 1024;
    if (segment_.size() < words) segment_.assign(words, 0);
    auto* first = reinterpret_cast<capnp::word*>(segment_.data());
    capnp::MallocMessageBuilder builder(kj::arrayPtr(first, words));
    codec::fill_chunk(builder.initRoot<schema::Message>().initChunk(), s, r);
    auto st = write_message(out_, builder);
    // What the message used of the buffer is zeroed for the next one (a message that outgrew
    // it got more segments of capnp's own).
    auto used = builder.getSegmentsForOutput()[0];
    if (used.begin() == first) std::memset(segment_.data(), 0, used.size() * sizeof(capnp::word));
    if (!st) return st;
    // Each chunk is made durable on its own: a killed producer loses at most the chunk in flight.
    st = out_.flush();
    if (!st) return st;
    ++chunks_;
  }
  s.samples.clear();
  s.stack_copies.clear();
  s.location_updates.clear();
  return out_.flush();
}

Status Writer::end_session(model::Session& s, bool clean_close) {
  auto st = write_chunk(s);
  if (!st) return st;
  model::Trailer t = s.trailer.value_or(model::Trailer{});
  t.counters = s.counters;
  st = write_trailer(t, clean_close);
  t.clean_close = clean_close;
  t.chunk_count = chunks_;
  t.sample_count = samples_;
  s.trailer = t;
  return st;
}

Status Writer::end_deltas(model::Trailer t, bool clean_close) {
  return write_trailer(std::move(t), clean_close);
}

Status Writer::write_trailer(model::Trailer t, bool clean_close) {
  t.clean_close = clean_close;
  t.chunk_count = chunks_;
  t.sample_count = samples_;
  capnp::MallocMessageBuilder builder;
  codec::fill_trailer(builder.initRoot<schema::Message>().initTrailer(), t);
  auto st = write_message(out_, builder);
  if (!st) return st;
  st = out_.end_frame();
  if (!st) return st;
  return out_.flush();
}

Status Writer::write_session(model::Session& s) {
  auto st = begin_session(s);
  if (!st) return st;
  // A session that was cut stays marked as cut, so every later tool still reports it.
  return end_session(s, !s.truncated);
}

Status write_archive(OutputStream& out, model::Archive& archive, WriterOptions options) {
  Writer writer(out, std::move(options));
  for (auto& s : archive.sessions) {
    auto st = writer.write_session(s);
    if (!st) return st;
  }
  return ok_status();
}

}  // namespace gp::archive
