#pragma once
// The one reader of perf.data bytes that the decoders of libcore/src/import share (the header,
// records, feature sections; private): host byte order, every take checks what is left, views
// point into the caller's bytes.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace gp::import {

// The value of type T at `off` of `b`; the caller has checked that it lies inside.
template <typename T>
T load_at(std::span<const uint8_t> b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

class PerfBytes {
 public:
  explicit PerfBytes(std::span<const uint8_t> b) : b_(b) {}
  bool u64(uint64_t& v) { return get(&v, 8); }
  bool u32(uint32_t& v) { return get(&v, 4); }
  bool i32(int32_t& v) { return get(&v, 4); }
  bool skip(uint64_t n) {
    if (n > left()) return false;
    pos_ += n;
    return true;
  }
  // n bytes as a view; false when fewer are left.
  bool bytes(uint64_t n, std::span<const uint8_t>& out) {
    if (n > left()) return false;
    out = b_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  // The rest, up to its first NUL (perf pads names with NULs to 8 bytes).
  std::string_view c_string() {
    auto rest = b_.subspan(pos_);
    const void* nul = std::memchr(rest.data(), 0, rest.size());
    size_t n = nul ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - rest.data())
                   : rest.size();
    pos_ = b_.size();
    return {reinterpret_cast<const char*>(rest.data()), n};
  }
  // perf_header_string: u32 len, then len bytes (NUL-padded).
  bool string(std::string& out) {
    uint32_t len;
    if (!u32(len) || len > left()) return false;
    const char* p = reinterpret_cast<const char*>(b_.data() + pos_);
    out.assign(p, strnlen(p, len));
    pos_ += len;
    return true;
  }
  uint64_t left() const { return b_.size() - pos_; }
  size_t pos() const { return pos_; }

 private:
  bool get(void* v, size_t n) {
    if (left() < n) return false;
    std::memcpy(v, b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
};

}  // namespace gp::import
