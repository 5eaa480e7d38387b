#include "fold/protobuf_writer.h"

namespace gp::fold::proto {

namespace {
constexpr uint32_t kWireVarint = 0;
constexpr uint32_t kWireLengthDelimited = 2;
}  // namespace

size_t varint_size(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

void ProtoWriter::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    buf_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  buf_.push_back(static_cast<char>(value));
}

void ProtoWriter::tag(uint32_t field, uint32_t wire_type) {
  raw_varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

void ProtoWriter::varint_field(uint32_t field, uint64_t value) {
  tag(field, kWireVarint);
  raw_varint(value);
}

void ProtoWriter::bytes_field(uint32_t field, std::string_view bytes) {
  tag(field, kWireLengthDelimited);
  raw_varint(bytes.size());
  buf_.append(bytes);
}

void ProtoWriter::packed_varints(uint32_t field, std::span<const uint64_t> values) {
  if (values.empty()) return;
  size_t length = 0;
  for (uint64_t v : values) length += varint_size(v);
  tag(field, kWireLengthDelimited);
  raw_varint(length);
  for (uint64_t v : values) raw_varint(v);
}

void ProtoWriter::packed_varints(uint32_t field, std::span<const int64_t> values) {
  if (values.empty()) return;
  size_t length = 0;
  for (int64_t v : values) length += varint_size(static_cast<uint64_t>(v));
  tag(field, kWireLengthDelimited);
  raw_varint(length);
  for (int64_t v : values) raw_varint(static_cast<uint64_t>(v));
}

}  // namespace gp::fold::proto
