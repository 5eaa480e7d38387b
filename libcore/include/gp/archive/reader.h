#pragma once
// Reading archives: a stream of capnp messages (formats/README.md) into model::Session values.
// Never trusts the input: every size is bounded, every table reference checked, and any byte
// sequence gives sessions, a truncated prefix, or an Error — never a crash.

#include <optional>
#include <string>

#include "gp/archive/byte_io.h"
#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::archive {

// What a reader materialises is bounded by what an honest writer could have produced
// (formats/README.md §6); a message over a limit is corrupt.
struct ReaderLimits {
  size_t max_message_bytes = 256u << 20;  // a writer's chunk is ~1 MiB; leave ample headroom
  uint32_t max_segments = 1024;
  // Entries of one list in one message (a chunk's table or samples, a process's argv, a
  // location's lines ...): a 512 KiB chunk holds at most ~22,000.
  size_t max_list_entries = 1u << 17;
  // Frames of one stack: gp-record's are at most 2 x 127, runtimes cut theirs at 1,024-2,048.
  size_t max_stack_frames = 1u << 13;
  // Entries of one JIT perf map (a copy is at most 64 MiB of text).
  size_t max_jit_entries = 1u << 22;
};

// How many entries each table held before a chunk (model::TableCounts).
using model::TableCounts;

// One chunk on its own, for tools that stream a session instead of holding it. `entries` holds
// only this chunk's lists: its n-th location has id base.locations + n, and so on for every
// table. Every reference was checked against the session's running totals. Location updates are
// not applied (they may name locations of earlier chunks): they stay in entries.location_updates.
// entries.counters holds the counters this chunk carried; entries.header is unused.
struct ChunkDelta {
  TableCounts base;
  model::Session entries;
};

// What Reader::next_event() read: a session starts, one of its chunks, or it ends.
struct ReadEvent {
  enum class Kind { header, chunk, end_of_session, end_of_stream };
  Kind kind = Kind::end_of_stream;
  model::Header header;                   // header
  ChunkDelta chunk;                       // chunk
  std::optional<model::Trailer> trailer;  // end_of_session: the trailer, if the session had one
  bool truncated = false;  // end_of_session: cut or not closed cleanly (see problem())
};

class Reader {
 public:
  explicit Reader(InputStream& in, ReaderLimits limits = {}) : in_(in), limits_(limits) {}

  // The next session, or nullopt at the end of the stream. A session that was cut (no trailer,
  // or a corrupt message) comes back with `truncated` set and problem() saying why; after it,
  // reading stops. An Error means no session could be read at all (not an archive, unreadable,
  // newer major format) — or an I/O error.
  Result<std::optional<model::Session>> next();
  // The streaming form of next(), one message at a time: header, chunk..., end_of_session (for
  // every session, also a cut one: then `truncated` is set and problem() says why), and finally
  // end_of_stream (problem() set when garbage followed the last session). Memory stays that of
  // one chunk. An Error means the stream is not an archive (first header) or an I/O error before
  // any session. Do not mix with next() on one Reader.
  Result<ReadEvent> next_event();
  // Why the last session was truncated; empty otherwise.
  const std::string& problem() const { return problem_; }

 private:
  // One step of the session state machine; chunks go into `full` (a whole session: updates
  // applied) when given, else into the event as a delta.
  Result<ReadEvent> step(model::Session* full);
  Result<ReadEvent> start_session();

  InputStream& in_;
  ReaderLimits limits_;
  bool in_session_ = false;
  uint64_t chunks_ = 0;   // chunks of the current session
  uint64_t samples_ = 0;  // sum of Sample.count over them (wraps as the writer's sum does)
  TableCounts counts_;    // tables of the current session so far (streaming)
  std::string problem_;
  bool done_ = false;
  size_t sessions_read_ = 0;
  std::optional<model::Header> pending_header_;  // a header that cut the previous session short
};

// Reads every session of a stream.
Result<model::Archive> read_archive(InputStream& in, ReaderLimits limits = {});
// Opens `path` ("-" for stdin) and reads every session.
Result<model::Archive> read_archive(const std::string& path, ReaderLimits limits = {});

// True when the first bytes look like an archive (plain capnp message or LZ4 frame), used by
// tools that also accept text (.col, folded, perf script).
bool looks_like_archive(std::string_view first_bytes);

}  // namespace gp::archive
