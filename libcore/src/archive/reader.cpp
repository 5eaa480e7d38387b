#include "gp/archive/reader.h"

#include <capnp/serialize.h>

#include <cstdint>
#include <cstring>

#include "codec.h"

namespace gp::archive {
namespace {

enum class ReadState { message, end, truncated, corrupt };

struct RawMessage {
  ReadState state = ReadState::end;
  kj::Array<capnp::word> words;
  std::string problem;  // for truncated / corrupt
  uint64_t offset = 0;  // decoded stream offset where the message began
};

// Reads one capnp stream-framed message with bounded sizes. Framing: u32 segment count - 1,
// u32 size (words) per segment, padding to 8 bytes, then the segments.
Result<RawMessage> read_raw_message(InputStream& in, const ReaderLimits& limits) {
  RawMessage msg;
  auto at_end = in.at_end();
  if (!at_end) return at_end.error();
  msg.offset = in.position();
  if (*at_end) return msg;

  uint32_t first[2];
  auto got = in.read(first, 8);
  if (!got) return got.error();
  if (*got < 8) {
    msg.state = ReadState::truncated;
    msg.problem = "stream ends inside a message header";
    return msg;
  }
  uint64_t segments = uint64_t{first[0]} + 1;
  if (segments > limits.max_segments) {
    msg.state = ReadState::corrupt;
    msg.problem = "message claims " + std::to_string(segments) + " segments";
    return msg;
  }
  size_t table_words = (segments + 2) / 2;  // count + sizes, padded to a word
  kj::Vector<uint32_t> sizes;
  sizes.add(first[1]);
  std::vector<uint32_t> rest(table_words * 2 - 2);
  if (!rest.empty()) {
    got = in.read(rest.data(), rest.size() * 4);
    if (!got) return got.error();
    if (*got < rest.size() * 4) {
      msg.state = ReadState::truncated;
      msg.problem = "stream ends inside a segment table";
      return msg;
    }
  }
  uint64_t total_words = first[1];
  for (uint64_t i = 1; i < segments; ++i) total_words += rest[i - 1];
  if (total_words * 8 > limits.max_message_bytes) {
    msg.state = ReadState::corrupt;
    msg.problem = "message claims " + std::to_string(total_words * 8) + " bytes";
    return msg;
  }
  msg.words = kj::heapArray<capnp::word>(table_words + total_words);
  auto* bytes = reinterpret_cast<char*>(msg.words.begin());
  std::memcpy(bytes, first, 8);
  if (!rest.empty()) std::memcpy(bytes + 8, rest.data(), rest.size() * 4);
  size_t body = total_words * 8;
  got = in.read(bytes + table_words * 8, body);
  if (!got) return got.error();
  if (*got < body) {
    msg.state = ReadState::truncated;
    msg.problem = "stream ends inside a message (" + std::to_string(*got) + " of " +
                  std::to_string(body) + " bytes)";
    return msg;
  }
  msg.state = ReadState::message;
  return msg;
}

enum class Kind { header, chunk, trailer };

struct Decoded {
  Kind kind;
  model::Header header;
  model::Trailer trailer;
};

// Parses one message and, for chunks, applies it to `session` (whose tables follow `base`
// entries; updates applied when `apply_updates`). kj exceptions (bad pointers, traversal limit)
// become Errors.
Result<Decoded> decode(const RawMessage& raw, model::Session* session, const ReaderLimits& limits,
                       const TableCounts& base = {}, bool apply_updates = true) {
  capnp::ReaderOptions options;
  // Bound the work to a small multiple of the message's size (amplification attacks).
  options.traversalLimitInWords = std::max<uint64_t>(raw.words.size() * 4, 1024);
  Decoded out{};
  Status status = ok_status();
  KJ_IF_MAYBE (e, kj::runCatchingExceptions([&]() {
                 capnp::FlatArrayMessageReader reader(raw.words.asPtr(), options);
                 auto root = reader.getRoot<schema::Message>();
                 switch (root.which()) {
                   case schema::Message::HEADER: {
                     out.kind = Kind::header;
                     auto h = codec::read_header(root.getHeader());
                     if (!h) status = h.error();
                     else out.header = std::move(*h);
                     break;
                   }
                   case schema::Message::CHUNK:
                     out.kind = Kind::chunk;
                     if (session)
                       status = codec::apply_chunk(root.getChunk(), *session, base, apply_updates,
                                                   limits);
                     break;
                   case schema::Message::TRAILER:
                     out.kind = Kind::trailer;
                     out.trailer = codec::read_trailer(root.getTrailer());
                     break;
                   default:
                     status = make_error("unknown message type");
                 }
               })) {
    return make_error(std::string("malformed message: ") + e->getDescription().cStr());
  }
  if (!status) return status.error();
  return out;
}

// Adds the counts of s.samples[from..] to `total`; false (total unchanged) when the sum would
// overflow 64 bits.
bool add_samples(const model::Session& s, size_t from, uint64_t& total) {
  uint64_t sum = total;
  for (size_t i = from; i < s.samples.size(); ++i) {
    if (s.samples[i].count > UINT64_MAX - sum) return false;
    sum += s.samples[i].count;
  }
  total = sum;
  return true;
}

}  // namespace

// Reads the header that starts the next session (or the one that cut the previous one short).
Result<ReadEvent> Reader::start_session() {
  ReadEvent ev;
  if (done_) return ev;  // end_of_stream
  problem_.clear();
  if (pending_header_) {
    ev.header = std::move(*pending_header_);
    pending_header_.reset();
  } else {
    auto raw = read_raw_message(in_, limits_);
    if (!raw) return raw.error();
    const bool first = sessions_read_ == 0;
    if (raw->state == ReadState::end) {
      done_ = true;
      if (first) return make_error("'" + in_.name() + "' is empty: not a gp archive");
      // A frame that began after the last session and never ended (a bare LZ4 magic, or a
      // frame cut before its first message) is garbage after a complete session (§5).
      if (in_.ended_inside_frame())
        problem_ = "archive '" + in_.name() + "' has trailing garbage at byte " +
                   std::to_string(raw->offset) + ": it ends inside an LZ4 frame";
      return ev;
    }
    if (raw->state != ReadState::message) {
      done_ = true;
      if (first) return make_error("'" + in_.name() + "' is not a gp archive: " + raw->problem);
      problem_ = "archive '" + in_.name() + "' has trailing garbage at byte " +
                 std::to_string(raw->offset) + ": " + raw->problem;
      return ev;
    }
    auto d = decode(*raw, nullptr, limits_);
    if (!d || d->kind != Kind::header) {
      done_ = true;
      std::string why = d ? "it does not start with a session header" : d.error().message;
      if (first) return make_error("'" + in_.name() + "' is not a gp archive: " + why);
      problem_ = "archive '" + in_.name() + "' is corrupt at byte " + std::to_string(raw->offset) +
                 ": " + why;
      return ev;
    }
    ev.header = std::move(d->header);
  }
  ++sessions_read_;
  in_session_ = true;
  chunks_ = 0;
  samples_ = 0;
  counts_ = {};
  ev.kind = ReadEvent::Kind::header;
  return ev;
}

Result<ReadEvent> Reader::step(model::Session* full) {
  if (!in_session_) return start_session();
  ReadEvent ev;
  auto raw = read_raw_message(in_, limits_);
  std::string why;
  uint64_t offset = in_.position();
  if (!raw) {
    why = raw.error().message;
  } else if (raw->state == ReadState::message) {
    model::Session* into = full != nullptr ? full : &ev.chunk.entries;
    const size_t samples_before = into->samples.size();
    auto d =
        decode(*raw, into, limits_, full != nullptr ? TableCounts{} : counts_, full != nullptr);
    if (!d) {
      why = d.error().message;
      offset = raw->offset;
      // A message that does not decode adds no samples: those decoded before the fault were
      // never summed (nor checked against 64 bits), and a re-written archive would read otherwise.
      into->samples.resize(samples_before);
    } else if (d->kind == Kind::chunk && !add_samples(*into, samples_before, samples_)) {
      // No honest session counts 2^64 samples; wrapping would misstate every share.
      why = "the session's sample counts overflow 64 bits";
      offset = raw->offset;
      into->samples.resize(samples_before);
    } else if (d->kind == Kind::chunk) {
      ++chunks_;
      ev.kind = ReadEvent::Kind::chunk;
      if (full == nullptr) {
        ev.chunk.base = counts_;
        counts_ = counts_.plus(ev.chunk.entries);
      }
      return ev;
    } else if (d->kind == Kind::trailer) {
      in_session_ = false;
      ev.kind = ReadEvent::Kind::end_of_session;
      ev.trailer = std::move(d->trailer);
      if (!ev.trailer->clean_close) {
        ev.truncated = true;
        problem_ = "archive '" + in_.name() + "': session " + std::to_string(sessions_read_) +
                   " was not closed cleanly";
      } else if (ev.trailer->chunk_count != chunks_ || ev.trailer->sample_count != samples_) {
        // Chunks dropped or repeated between a header and its trailer (§3): what was read is
        // kept, but it is not the session the producer closed.
        ev.truncated = true;
        problem_ = "archive '" + in_.name() + "': session " + std::to_string(sessions_read_) +
                   " does not match its trailer (read " + std::to_string(chunks_) + " chunks and " +
                   std::to_string(samples_) + " samples; the trailer counts " +
                   std::to_string(ev.trailer->chunk_count) + " and " +
                   std::to_string(ev.trailer->sample_count) + ")";
      }
      return ev;
    } else {  // a new header: this session was cut, the next one starts here
      in_session_ = false;
      pending_header_ = std::move(d->header);
      ev.kind = ReadEvent::Kind::end_of_session;
      ev.truncated = true;
      problem_ = "archive '" + in_.name() + "' is truncated: session " +
                 std::to_string(sessions_read_) + " has no trailer (kept " +
                 std::to_string(chunks_) + " chunks)";
      return ev;
    }
  } else if (raw->state != ReadState::end) {
    why = raw->problem;
    offset = raw->offset;
  }
  in_session_ = false;
  done_ = true;
  ev.kind = ReadEvent::Kind::end_of_session;
  ev.truncated = true;
  problem_ = "archive '" + in_.name() + "' is truncated: kept the first " +
             std::to_string(chunks_) + " chunks of session " + std::to_string(sessions_read_);
  if (!why.empty()) problem_ += " (" + why + " at byte " + std::to_string(offset) + ")";
  return ev;
}

Result<ReadEvent> Reader::next_event() { return step(nullptr); }

Result<std::optional<model::Session>> Reader::next() {
  auto start = step(nullptr);  // not in a session here: reads a header or ends
  if (!start) return start.error();
  if (start->kind != ReadEvent::Kind::header) return std::optional<model::Session>{};
  model::Session session;
  session.header = std::move(start->header);
  for (;;) {
    auto ev = step(&session);
    if (!ev) return ev.error();  // not reached: step turns errors inside a session into a cut
    if (ev->kind == ReadEvent::Kind::chunk) continue;
    session.trailer = std::move(ev->trailer);
    session.truncated = ev->truncated;
    return std::optional<model::Session>(std::move(session));
  }
}

Result<model::Archive> read_archive(InputStream& in, ReaderLimits limits) {
  Reader reader(in, limits);
  model::Archive archive;
  for (;;) {
    auto s = reader.next();
    if (!s) {
      if (archive.sessions.empty()) return s.error();
      archive.truncated = true;
      archive.problem = s.error().message;
      return archive;
    }
    if (!reader.problem().empty()) {
      archive.truncated = true;
      if (archive.problem.empty()) archive.problem = reader.problem();
    }
    if (!s->has_value()) return archive;
    archive.sessions.push_back(std::move(**s));
  }
}

Result<model::Archive> read_archive(const std::string& path, ReaderLimits limits) {
  auto in = InputStream::open(path);
  if (!in) return in.error();
  return read_archive(**in, limits);
}

bool looks_like_archive(std::string_view b) {
  static const unsigned char lz4[4] = {0x04, 0x22, 0x4D, 0x18};
  if (b.size() >= 4 && std::memcmp(b.data(), lz4, 4) == 0) return true;
  // A plain stream starts with a small segment count (u32 LE) and a binary pointer word:
  // text formats never start with a NUL byte in their first four bytes.
  return b.size() >= 8 && b[3] == 0 && b[2] == 0 && static_cast<unsigned char>(b[1]) < 4;
}

}  // namespace gp::archive
