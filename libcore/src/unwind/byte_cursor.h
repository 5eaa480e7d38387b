#pragma once
// A bounds-checked little-endian reader over untrusted bytes (CFI sections). A read past the end
// returns 0 and clears ok(); callers check ok() once after a group of reads.

#include <cstdint>
#include <cstring>
#include <optional>

namespace gp::unwind {

class ByteCursor {
 public:
  ByteCursor(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}

  bool ok() const { return ok_; }
  const uint8_t* pos() const { return p_; }
  const uint8_t* end() const { return end_; }
  uint64_t remaining() const { return static_cast<uint64_t>(end_ - p_); }
  bool at_end() const { return p_ >= end_; }
  void fail() {
    ok_ = false;
    p_ = end_;
  }

  bool skip(uint64_t n) {
    if (n > remaining()) {
      fail();
      return false;
    }
    p_ += n;
    return true;
  }
  uint8_t u8() { return static_cast<uint8_t>(fixed(1)); }
  uint16_t u16() { return static_cast<uint16_t>(fixed(2)); }
  uint32_t u32() { return static_cast<uint32_t>(fixed(4)); }
  uint64_t u64() { return fixed(8); }

  uint64_t uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      // A 64-bit value takes at most 10 bytes; a longer one is corrupt.
      if (p_ >= end_ || shift >= 70) {
        fail();
        return 0;
      }
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
  }
  int64_t sleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
      if (p_ >= end_ || shift >= 70) {
        fail();
        return 0;
      }
      b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(v);
  }

 private:
  uint64_t fixed(unsigned n) {
    if (n > remaining()) {
      fail();
      return 0;
    }
    uint64_t v = 0;
    std::memcpy(&v, p_, n);  // x86-64 only: the host and the CFI are little-endian
    p_ += n;
    return v;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

// DW_EH_PE_* pointer encodings (LSB 5.0, "DWARF Extensions"; .debug_frame uses absptr).
inline constexpr uint8_t kPeAbsptr = 0x00;
inline constexpr uint8_t kPeOmit = 0xff;
inline constexpr uint8_t kPeIndirect = 0x80;

// Where relative pointers count from.
struct PointerBases {
  uint64_t section_address = 0;  // virtual address of the section's first byte (pcrel)
  const uint8_t* section_begin = nullptr;
  uint64_t data_base = 0;  // datarel
  uint64_t text_base = 0;  // textrel
  uint64_t func_base = 0;  // funcrel: the FDE's initial location
};

// Reads one pointer in `encoding` at the cursor. Only the value's size when `value_only` (an FDE's
// address range is in the format of the R encoding, without its application). nullopt for an
// unknown encoding or a truncated read. The indirect bit is ignored (gp reads no memory); callers
// that need the pointer itself refuse it.
inline std::optional<uint64_t> read_encoded(ByteCursor& c, uint8_t encoding,
                                            const PointerBases& bases, bool value_only = false) {
  const uint64_t field =
      bases.section_address + static_cast<uint64_t>(c.pos() - bases.section_begin);
  uint64_t v = 0;
  switch (encoding & 0x0f) {
    case 0x00:
      v = c.u64();
      break;  // absptr (8 bytes)
    case 0x01:
      v = c.uleb();
      break;  // uleb128
    case 0x02:
      v = c.u16();
      break;  // udata2
    case 0x03:
      v = c.u32();
      break;  // udata4
    case 0x04:
      v = c.u64();
      break;  // udata8
    case 0x09:
      v = static_cast<uint64_t>(c.sleb());
      break;  // sleb128
    case 0x0a:
      v = static_cast<uint64_t>(static_cast<int16_t>(c.u16()));
      break;  // sdata2
    case 0x0b:
      v = static_cast<uint64_t>(static_cast<int32_t>(c.u32()));
      break;  // sdata4
    case 0x0c:
      v = c.u64();
      break;  // sdata8
    default:
      return std::nullopt;
  }
  if (!c.ok()) return std::nullopt;
  if (value_only) return v;
  switch (encoding & 0x70) {
    case 0x00:
      return v;
    case 0x10:
      return v + field;  // pcrel
    case 0x20:
      return v + bases.text_base;
    case 0x30:
      return v + bases.data_base;
    case 0x40:
      return v + bases.func_base;
    default:
      return std::nullopt;  // aligned and unknown applications
  }
}

// Whether `encoding` is one read_encoded understands (omit excluded).
inline bool known_encoding(uint8_t encoding) {
  const uint8_t format = encoding & 0x0f;
  const bool format_ok = format <= 0x04 || (format >= 0x09 && format <= 0x0c);
  return format_ok && (encoding & 0x70) <= 0x40;
}

}  // namespace gp::unwind
