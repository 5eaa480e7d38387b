#pragma once
// Writing archives: sessions as header, small chunks, trailer (formats/README.md).
// The writer streams: a producer keeps one growing model::Session and calls write_chunk()
// whenever it wants what it has made durable; each call writes only what is new.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gp/archive/byte_io.h"
#include "gp/archive/reader.h"
#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::archive {

struct WriterOptions {
  size_t chunk_bytes = 512u << 10;  // target size of one chunk message (estimated)
  std::string producer;             // stamped into headers when the session has none
  std::string producer_version;
};

class Writer {
 public:
  explicit Writer(OutputStream& out, WriterOptions options = {})
      : out_(out), opt_(std::move(options)) {}

  // Writes the session's header (magic and format version are filled in here).
  Status begin_session(model::Session& s);
  // Writes the table entries added since the last call, then every entry of s.samples,
  // s.stack_copies and s.location_updates, and clears those three lists. Flushes the stream.
  Status write_chunk(model::Session& s);
  // write_chunk, then the trailer (s.trailer's counts are filled in; clean_close as given), and
  // the end of the compressed frame.
  Status end_session(model::Session& s, bool clean_close = true);
  // begin + chunk + end for a session built in memory.
  Status write_session(model::Session& s);

  // Streaming copy, for a session that is never held whole: after begin_session, write each
  // chunk as a delta (ChunkDelta: only the new entries, and the ids they start after), then
  // end_deltas. delta.base must equal the entries written so far in this session (else an
  // Error: ids would shift). Writes every list of delta.entries (in chunks of about
  // chunk_bytes, counters once) and clears them.
  Status write_delta(ChunkDelta& delta);
  // Ends a session written with write_delta: the trailer t, with its chunk and sample counts
  // filled in (t.counters as given) and clean_close as given.
  Status end_deltas(model::Trailer t, bool clean_close);
  // Entries written so far in this session.
  const TableCounts& written() const { return written_; }

 private:
  using Cursor = TableCounts;
  // Writes the lists of s from `from` on (and all of s.samples, stack_copies, location_updates
  // and counters) as chunks, advancing `from`.
  Status write_lists(model::Session& s, Cursor& from);
  Status write_trailer(model::Trailer t, bool clean_close);

  OutputStream& out_;
  WriterOptions opt_;
  Cursor written_;
  uint64_t chunks_ = 0;
  uint64_t samples_ = 0;
  // The first segment of every chunk message, all zero between messages (capnp's requirement):
  // one buffer reused, not a new zeroed allocation per chunk whose pages the kernel zeroes too.
  std::vector<uint64_t> segment_;
};

// Writes every session of an archive (each as a whole).
Status write_archive(OutputStream& out, model::Archive& archive, WriterOptions options = {});

}  // namespace gp::archive
