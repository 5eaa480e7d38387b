// Line-table decoders for CPython 3.8 - 3.15 (see line_table.h for the formats).
#include "runtime/python/line_table.h"

#include <cstddef>

namespace gp::runtime::python {
namespace {

int32_t signed_byte(char c) { return static_cast<int32_t>(static_cast<signed char>(c)); }
uint32_t unsigned_byte(char c) { return static_cast<unsigned char>(c); }

uint32_t lnotab_line(std::string_view t, uint32_t first_line, uint32_t offset) {
  int64_t line = first_line;
  uint32_t addr = 0;
  for (size_t i = 0; i + 1 < t.size(); i += 2) {
    addr += unsigned_byte(t[i]);
    if (addr > offset) break;
    line += signed_byte(t[i + 1]);
  }
  return line > 0 ? static_cast<uint32_t>(line) : 0;
}

// 3.10: each pair covers [start, start + delta) with the line computed so far.
uint32_t linetable310_line(std::string_view t, uint32_t first_line, uint32_t offset) {
  int64_t line = first_line;
  uint32_t start = 0;
  for (size_t i = 0; i + 1 < t.size(); i += 2) {
    uint32_t end = start + unsigned_byte(t[i]);
    int32_t delta = signed_byte(t[i + 1]);
    bool no_line = delta == -128;
    if (!no_line) line += delta;
    if (offset >= start && offset < end) return no_line || line <= 0 ? 0 : uint32_t(line);
    start = end;
  }
  return first_line;
}

// 3.11+ varints: 6 bits per byte, 0x40 = more follows.
struct Cursor {
  std::string_view t;
  size_t i = 0;
  bool more() const { return i < t.size(); }
  uint32_t byte() { return i < t.size() ? unsigned_byte(t[i++]) : 0; }
  uint32_t varint() {
    uint32_t b = byte();
    uint32_t value = b & 63;
    for (int shift = 6; (b & 64) != 0 && shift < 32; shift += 6) {
      b = byte();
      value |= (b & 63) << shift;
    }
    return value;
  }
  int32_t svarint() {
    uint32_t v = varint();
    return (v & 1) != 0 ? -static_cast<int32_t>(v >> 1) : static_cast<int32_t>(v >> 1);
  }
};

uint32_t locations311_line(std::string_view t, uint32_t first_line, uint32_t offset) {
  const uint32_t unit = offset / 2;  // code units of 2 bytes
  int64_t line = first_line;
  uint32_t start = 0;
  Cursor c{t};
  while (c.more()) {
    uint32_t head = c.byte();
    if ((head & 0x80) == 0) break;  // every entry starts with the high bit set: torn table
    uint32_t code = (head >> 3) & 15;
    uint32_t end = start + (head & 7) + 1;
    bool no_line = false;
    if (code == 15) {
      no_line = true;
    } else if (code == 14) {  // long form: line delta, end line, column, end column
      line += c.svarint();
      c.varint();
      c.varint();
      c.varint();
    } else if (code == 13) {  // no column
      line += c.svarint();
    } else if (code >= 10) {  // one-line form: delta in the code, two column bytes
      line += code - 10;
      c.byte();
      c.byte();
    } else {  // short form: same line, one column byte
      c.byte();
    }
    if (unit >= start && unit < end) return no_line || line <= 0 ? 0 : uint32_t(line);
    start = end;
  }
  return first_line;
}

}  // namespace

LineTableFormat line_table_format(int minor) {
  if (minor <= 9) return LineTableFormat::lnotab;
  if (minor == 10) return LineTableFormat::linetable310;
  return LineTableFormat::locations311;
}

uint32_t line_for_offset(LineTableFormat format, std::string_view table, uint32_t first_line,
                         uint32_t byte_offset) {
  switch (format) {
    case LineTableFormat::lnotab:
      return lnotab_line(table, first_line, byte_offset);
    case LineTableFormat::linetable310:
      return linetable310_line(table, first_line, byte_offset);
    case LineTableFormat::locations311:
      return locations311_line(table, first_line, byte_offset);
  }
  return first_line;
}

}  // namespace gp::runtime::python
