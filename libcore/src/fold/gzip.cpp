// gzip through zlib's deflate/inflate with windowBits 16+15 (gzip wrapper, 32 KiB window).
#include "gp/fold/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>

namespace gp::fold {

namespace {

constexpr int kGzipWindowBits = 15 + 16;  // +16 selects the gzip header instead of zlib's
constexpr size_t kBufferSize = 64 * 1024;

std::string zlib_message(const z_stream& z, int rc) {
  if (z.msg != nullptr) return z.msg;
  return "zlib error " + std::to_string(rc);
}

}  // namespace

struct GzipWriter::State {
  z_stream z{};
  bool initialised = false;
  bool finished = false;
  std::array<unsigned char, kBufferSize> buffer{};
};

GzipWriter::GzipWriter(std::ostream& out, int level)
    : state_(std::make_unique<State>()), out_(out) {
  int rc = deflateInit2(&state_->z, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY);
  state_->initialised = rc == Z_OK;
  failed_ = rc != Z_OK;
}

GzipWriter::~GzipWriter() {
  if (state_->initialised) deflateEnd(&state_->z);
}

// Runs deflate until it has consumed all input (Z_NO_FLUSH) or ended the stream (Z_FINISH),
// writing each full output buffer to the stream.
Status GzipWriter::pump(int flush_mode) {
  z_stream& z = state_->z;
  for (;;) {
    z.next_out = state_->buffer.data();
    z.avail_out = static_cast<uInt>(state_->buffer.size());
    int rc = deflate(&z, flush_mode);
    if (rc == Z_STREAM_ERROR) {
      failed_ = true;
      return make_error("gzip: " + zlib_message(z, rc));
    }
    size_t produced = state_->buffer.size() - z.avail_out;
    if (produced > 0) {
      out_.write(reinterpret_cast<const char*>(state_->buffer.data()),
                 static_cast<std::streamsize>(produced));
      if (!out_) {
        failed_ = true;
        return make_error(std::string("write failed: ") + std::strerror(errno));
      }
    }
    if (flush_mode == Z_FINISH ? rc == Z_STREAM_END : (z.avail_in == 0 && z.avail_out != 0)) {
      return ok_status();
    }
  }
}

Status GzipWriter::write(std::string_view bytes) {
  if (failed_) return make_error("gzip: stream already failed");
  if (state_->finished) return make_error("gzip: write after finish");
  z_stream& z = state_->z;
  // avail_in is 32-bit: feed huge inputs in slices.
  while (!bytes.empty()) {
    size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(n);
    if (auto st = pump(Z_NO_FLUSH); !st) return st;
    bytes.remove_prefix(n);
  }
  return ok_status();
}

Status GzipWriter::finish() {
  if (failed_) return make_error("gzip: stream already failed");
  if (state_->finished) return ok_status();
  state_->z.next_in = nullptr;
  state_->z.avail_in = 0;
  auto st = pump(Z_FINISH);
  if (st) state_->finished = true;
  return st;
}

Result<std::string> gzip(std::string_view bytes, int level) {
  std::ostringstream out;
  GzipWriter writer(out, level);
  if (auto st = writer.write(bytes); !st) return st.error();
  if (auto st = writer.finish(); !st) return st.error();
  return out.str();
}

bool looks_like_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> gunzip(std::string_view bytes, size_t max_output) {
  std::string out;
  while (!bytes.empty()) {  // one iteration per gzip member
    z_stream z{};
    if (inflateInit2(&z, kGzipWindowBits) != Z_OK) return make_error("gunzip: out of memory");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(std::min<size_t>(bytes.size(), UINT32_MAX));
    std::array<unsigned char, kBufferSize> buffer{};
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      z.next_out = buffer.data();
      z.avail_out = static_cast<uInt>(buffer.size());
      rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END) {
        std::string why = rc == Z_BUF_ERROR ? "unexpected end of data" : zlib_message(z, rc);
        inflateEnd(&z);
        return make_error("gunzip: " + why);
      }
      out.append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - z.avail_out);
      if (out.size() > max_output) {
        inflateEnd(&z);
        return make_error("gunzip: output exceeds " + std::to_string(max_output) + " bytes");
      }
    }
    bytes.remove_prefix(bytes.size() - z.avail_in);
    inflateEnd(&z);
  }
  return out;
}

}  // namespace gp::fold
