#pragma once
// Writing archives: sessions as header, small chunks, trailer (formats/README.md).
// The writer streams: a producer keeps one growing model::Session and calls write_chunk()
// whenever it wants what it has made durable; each call writes only what is new.

#include <cstddef>

#include "gp/archive/byte_io.h"
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
  explicit Writer(OutputStream& out, WriterOptions options = {}) : out_(out), opt_(std::move(options)) {}

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

 private:
  struct Cursor {
    size_t processes = 0, threads = 0, mappings = 0, functions = 0, locations = 0, stacks = 0,
           kernel_symbols = 0, jit_maps = 0;
  };
  OutputStream& out_;
  WriterOptions opt_;
  Cursor written_;
  uint64_t chunks_ = 0;
  uint64_t samples_ = 0;
};

// Writes every session of an archive (each as a whole).
Status write_archive(OutputStream& out, model::Archive& archive, WriterOptions options = {});

}  // namespace gp::archive
