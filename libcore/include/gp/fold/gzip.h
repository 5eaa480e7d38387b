#pragma once
// gzip (RFC 1952) streams through zlib: pprof files must be gzipped on disk, and pprof readers
// (like gp-upload's servers) accept gzip. Output goes to a std::ostream as it is produced, so a
// large profile never needs a second full copy in memory.

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "gp/util/result.h"

namespace gp::fold {

// Compresses everything passed to write() into one gzip member on `out`. Call finish() once
// at the end; a writer destroyed without finish() leaves a truncated stream behind.
// Not thread-safe. The stream must outlive the writer.
class GzipWriter {
 public:
  // level: zlib's 0..9 (6 is gzip's default).
  explicit GzipWriter(std::ostream& out, int level = 6);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  Status write(std::string_view bytes);
  Status finish();

 private:
  Status pump(int flush_mode);

  struct State;
  std::unique_ptr<State> state_;
  std::ostream& out_;
  bool failed_ = false;
};

// Gzips `bytes` into a string (one member).
Result<std::string> gzip(std::string_view bytes, int level = 6);

// Decompresses one or more concatenated gzip members. Refuses output above max_output bytes
// so that a hostile file cannot exhaust memory.
Result<std::string> gunzip(std::string_view bytes, size_t max_output = size_t{1} << 32);

// True when the bytes start with gzip's magic (1f 8b).
bool looks_like_gzip(std::string_view bytes);

}  // namespace gp::fold
