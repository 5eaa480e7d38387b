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

struct ReaderLimits {
  size_t max_message_bytes = 256u << 20;  // a writer's chunk is ~1 MiB; leave ample headroom
  uint32_t max_segments = 1024;
};

class Reader {
 public:
  explicit Reader(InputStream& in, ReaderLimits limits = {}) : in_(in), limits_(limits) {}

  // The next session, or nullopt at the end of the stream. A session that was cut (no trailer,
  // or a corrupt message) comes back with `truncated` set and problem() saying why; after it,
  // reading stops. An Error means no session could be read at all (not an archive, unreadable,
  // newer major format) — or an I/O error.
  Result<std::optional<model::Session>> next();
  // Why the last session was truncated; empty otherwise.
  const std::string& problem() const { return problem_; }

 private:
  InputStream& in_;
  ReaderLimits limits_;
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
