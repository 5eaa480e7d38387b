#pragma once
// Reads fixed-width integers of a given byte order from unaligned memory (ELF files of any
// endianness on any host).

#include <cstdint>

namespace gp::elf {

struct ByteOrder {
  bool big_endian = false;

  uint16_t u16(const char* p) const { return static_cast<uint16_t>(get(p, 2)); }
  uint32_t u32(const char* p) const { return static_cast<uint32_t>(get(p, 4)); }
  uint64_t u64(const char* p) const { return get(p, 8); }

 private:
  uint64_t get(const char* p, int n) const {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
      const auto byte = static_cast<uint8_t>(p[big_endian ? i : n - 1 - i]);
      v = (v << 8) | byte;
    }
    return v;
  }
};

}  // namespace gp::elf
