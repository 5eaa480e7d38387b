#pragma once
// A minimal protocol-buffers wire-format encoder: enough for pprof's profile.proto without a
// protoc dependency. Fields are appended in call order; nested messages are encoded into their
// own ProtoWriter first and then added with their length (the wire format needs it up front).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gp::fold::proto {

class ProtoWriter {
 public:
  // Wire type 0. Zero values are written too: callers skip defaults where proto3 would.
  void varint_field(uint32_t field, uint64_t value);
  // int64 fields use the same varint encoding (two's complement, 10 bytes when negative).
  void int64_field(uint32_t field, int64_t value) {
    varint_field(field, static_cast<uint64_t>(value));
  }
  void bool_field(uint32_t field, bool value) { varint_field(field, value ? 1 : 0); }
  // Wire type 2: strings, bytes and embedded messages.
  void bytes_field(uint32_t field, std::string_view bytes);
  void message_field(uint32_t field, const ProtoWriter& message) {
    bytes_field(field, message.buf_);
  }
  // A packed repeated varint field; nothing is written for an empty list.
  void packed_varints(uint32_t field, std::span<const uint64_t> values);
  void packed_varints(uint32_t field, std::span<const int64_t> values);

  // Appends fields that were encoded elsewhere (e.g. cached labels).
  void append_encoded(std::string_view fields) { buf_.append(fields); }

  const std::string& bytes() const { return buf_; }
  size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  void tag(uint32_t field, uint32_t wire_type);
  void raw_varint(uint64_t value);

  std::string buf_;
};

// Number of bytes raw_varint would use for `value`.
size_t varint_size(uint64_t value);

}  // namespace gp::fold::proto
