// CIE/FDE headers of .eh_frame and .debug_frame. The two differ in the CIE id (0 vs all-ones),
// the FDE's CIE pointer (relative to itself vs a section offset) and address encoding (the CIE's
// 'R' augmentation vs plain target addresses).

#include "unwind/cfi_entries.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "unwind/byte_cursor.h"

namespace gp::unwind {
namespace {

// One entry's framing: its length field decoded.
struct EntryHeader {
  const uint8_t* body = nullptr;  // after the length field
  const uint8_t* end = nullptr;   // the next entry
  bool dwarf64 = false;
};

enum class Framing { entry, terminator, broken };

Framing read_header(ByteCursor& c, EntryHeader& h) {
  const uint32_t len32 = c.u32();
  if (!c.ok()) return Framing::broken;
  uint64_t len = len32;
  if (len32 == 0xffffffffu) {
    len = c.u64();
    h.dwarf64 = true;
  } else if (len32 >= 0xfffffff0u) {
    return Framing::broken;  // reserved values
  }
  if (!c.ok() || len > c.remaining()) return Framing::broken;
  if (len == 0) return Framing::terminator;
  h.body = c.pos();
  h.end = c.pos() + len;
  return Framing::entry;
}

// Parses the augmentation string and data of a CIE; false when they cannot be understood (the
// instructions would then start at an unknown place).
bool parse_augmentation(ByteCursor& c, std::string_view aug, const PointerBases& bases, Cie& cie) {
  if (aug.empty()) return true;
  if (aug[0] != 'z') return false;  // "eh" (pre-2000 GCC) and vendor strings: refused
  cie.augmented = true;
  const uint64_t len = c.uleb();
  if (!c.ok() || len > c.remaining()) return false;
  ByteCursor data(c.pos(), c.pos() + len);
  c.skip(len);
  for (const char ch : aug.substr(1)) {
    switch (ch) {
      case 'R':
        cie.fde_encoding = data.u8();
        if (!known_encoding(cie.fde_encoding) || (cie.fde_encoding & kPeIndirect)) return false;
        break;
      case 'P': {
        const uint8_t enc = data.u8();
        if (!data.ok() || !known_encoding(enc)) return false;
        if (!read_encoded(data, enc, bases, /*value_only=*/true)) return false;
        break;
      }
      case 'L':
        data.u8();
        break;
      case 'S':
        cie.signal = true;
        break;
      case 'B':
        break;  // AArch64 BTI marker, no data
      default:
        return false;
    }
    if (!data.ok()) return false;
  }
  return true;
}

Cie parse_cie(const SectionContext& ctx, const EntryHeader& h, ByteCursor& c) {
  Cie cie;
  cie.usable = false;
  const uint8_t version = c.u8();
  if (!c.ok() || (version != 1 && version != 3 && version != 4)) return cie;
  const uint8_t* str = c.pos();
  const void* nul = std::memchr(str, 0, c.remaining());
  if (nul == nullptr) return cie;
  const std::string_view aug(reinterpret_cast<const char*>(str),
                             static_cast<const uint8_t*>(nul) - str);
  c.skip(aug.size() + 1);
  if (version == 4) {
    cie.address_size = c.u8();
    const uint8_t segment_size = c.u8();
    if (segment_size != 0 || (cie.address_size != 4 && cie.address_size != 8)) return cie;
  }
  if (!ctx.is_eh_frame && cie.address_size == 4) cie.fde_encoding = 0x03;  // udata4
  cie.code_align = c.uleb();
  cie.data_align = c.sleb();
  cie.ra_register = version == 1 ? c.u8() : c.uleb();
  if (!c.ok()) return cie;
  const PointerBases bases{ctx.section.address, ctx.section.data.data(), ctx.data_base,
                           ctx.text_base, 0};
  if (!ctx.is_eh_frame && !aug.empty()) return cie;  // .debug_frame: no augmentation expected
  if (!parse_augmentation(c, aug, bases, cie) || !c.ok()) return cie;
  cie.insns = c.pos();
  cie.insns_end = h.end;
  cie.usable = true;
  return cie;
}

// Index in out.cies of the CIE at section offset `off`, parsed on first use; -1 when there is no
// CIE there.
int64_t cie_at(const SectionContext& ctx, uint64_t off,
               std::unordered_map<uint64_t, uint32_t>& seen, CfiEntries& out) {
  if (const auto it = seen.find(off); it != seen.end()) return it->second;
  const auto& data = ctx.section.data;
  if (off >= data.size()) return -1;
  ByteCursor c(data.data() + off, data.data() + data.size());
  EntryHeader h;
  if (read_header(c, h) != Framing::entry) return -1;
  c = ByteCursor(h.body, h.end);
  const uint64_t id = h.dwarf64 && !ctx.is_eh_frame ? c.u64() : c.u32();
  const uint64_t cie_id = ctx.is_eh_frame ? 0 : (h.dwarf64 ? ~uint64_t{0} : 0xffffffffu);
  if (!c.ok() || id != cie_id) return -1;
  out.cies.push_back(parse_cie(ctx, h, c));
  const auto index = static_cast<uint32_t>(out.cies.size() - 1);
  seen.emplace(off, index);
  return index;
}

void parse_fde(const SectionContext& ctx, const EntryHeader& h, ByteCursor& c, uint64_t cie_off,
               std::unordered_map<uint64_t, uint32_t>& seen, CfiEntries& out) {
  const int64_t index = cie_at(ctx, cie_off, seen, out);
  if (index < 0 || !out.cies[static_cast<size_t>(index)].usable) {
    ++out.skipped;
    return;
  }
  const Cie& cie = out.cies[static_cast<size_t>(index)];
  const PointerBases bases{ctx.section.address, ctx.section.data.data(), ctx.data_base,
                           ctx.text_base, 0};
  const auto start = read_encoded(c, cie.fde_encoding, bases);
  const auto range = read_encoded(c, cie.fde_encoding, bases, /*value_only=*/true);
  if (cie.augmented) c.skip(c.uleb());
  if (!start || !range || !c.ok() || *range == 0 || *start + *range < *start) {
    ++out.skipped;
    return;
  }
  out.fdes.push_back(
      Fde{*start, *start + *range, static_cast<uint32_t>(index), !ctx.is_eh_frame, c.pos(), h.end});
}

}  // namespace

void parse_cfi_section(const SectionContext& ctx, CfiEntries& out) {
  const auto& data = ctx.section.data;
  if (data.empty()) return;
  std::unordered_map<uint64_t, uint32_t> seen;  // CIE section offset → index in out.cies
  // An FDE takes 20 bytes at least: room for them all at once spares the copies of a growing
  // vector (a large binary has a hundred thousand).
  out.fdes.reserve(out.fdes.size() + std::min<uint64_t>(data.size() / 20, out.max_fdes));
  ByteCursor c(data.data(), data.data() + data.size());
  while (!c.at_end()) {
    EntryHeader h;
    const Framing f = read_header(c, h);
    if (f == Framing::broken) break;
    if (f == Framing::terminator) {
      if (ctx.is_eh_frame) break;  // .eh_frame's zero terminator, as libgcc reads it
      continue;
    }
    ByteCursor body(h.body, h.end);
    const uint64_t id_off = static_cast<uint64_t>(body.pos() - data.data());
    // CIEs are parsed when an FDE refers to them (unused ones cost nothing).
    bool is_fde = false;
    uint64_t cie_off = 0;
    if (ctx.is_eh_frame) {
      const uint64_t id = body.u32();
      is_fde = id != 0;
      cie_off = id <= id_off ? id_off - id : ~uint64_t{0};  // `id` bytes before this field
    } else {
      const uint64_t id = h.dwarf64 ? body.u64() : body.u32();
      is_fde = id != (h.dwarf64 ? ~uint64_t{0} : 0xffffffffu);
      cie_off = id;
    }
    if (is_fde && out.fdes.size() >= out.max_fdes) {
      out.too_many = true;
      break;
    }
    if (is_fde && body.ok()) parse_fde(ctx, h, body, cie_off, seen, out);
    else if (is_fde) ++out.skipped;
    c = ByteCursor(h.end, data.data() + data.size());
  }
}

}  // namespace gp::unwind
