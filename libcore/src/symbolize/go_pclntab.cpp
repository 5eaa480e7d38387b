#include "gp/symbolize/go_pclntab.h"

#include <cstring>

namespace gp::symbolize {
namespace {

constexpr uint32_t kMagic118 = 0xfffffff0;  // Go 1.18, 1.19
constexpr uint32_t kMagic120 = 0xfffffff1;  // Go 1.20+

// Reads an unsigned LEB128 varint from data at *pos; false when it runs off the end.
bool read_uvarint(std::string_view data, size_t* pos, uint32_t* out) {
  uint32_t value = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (*pos >= data.size()) return false;
    auto b = static_cast<uint8_t>(data[(*pos)++]);
    value |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = value;
      return true;
    }
  }
  return false;
}

}  // namespace

uint32_t GoPclntab::u32(size_t offset) const {
  if (offset > data_.size() || data_.size() - offset < 4) return 0;
  uint32_t v;
  std::memcpy(&v, data_.data() + offset, 4);
  return v;
}

uint64_t GoPclntab::word(size_t offset) const {
  if (ptr_size_ == 4) return u32(offset);
  if (offset > data_.size() || data_.size() - offset < 8) return 0;
  uint64_t v;
  std::memcpy(&v, data_.data() + offset, 8);
  return v;
}

std::string GoPclntab::c_string(size_t offset) const {
  if (offset >= data_.size()) return {};
  const char* start = data_.data() + offset;
  const void* end = std::memchr(start, 0, data_.size() - offset);
  return end == nullptr ? std::string() : std::string(start, static_cast<const char*>(end));
}

Result<GoPclntab> GoPclntab::parse(std::string_view section, uint64_t text_start) {
  GoPclntab t;
  t.data_ = section;
  if (section.size() < 8) return make_error("gopclntab too short");
  uint32_t magic = t.u32(0);
  if (magic != kMagic118 && magic != kMagic120)
    return make_error("unsupported gopclntab layout (Go older than 1.18?)");
  t.has_start_line_ = magic == kMagic120;
  t.quantum_ = static_cast<uint8_t>(section[6]);
  t.ptr_size_ = static_cast<uint8_t>(section[7]);
  if (t.ptr_size_ != 4 && t.ptr_size_ != 8) return make_error("bad gopclntab pointer size");
  if (t.quantum_ == 0) return make_error("bad gopclntab instruction quantum");
  if (section.size() < 8 + 8 * size_t{t.ptr_size_}) return make_error("gopclntab header cut");
  auto field = [&](int i) { return t.word(8 + static_cast<size_t>(i) * t.ptr_size_); };
  t.nfunc_ = field(0);
  t.text_start_ = field(2) != 0 ? field(2) : text_start;
  t.funcname_ = field(3);
  t.cutab_ = field(4);
  t.filetab_ = field(5);
  t.pctab_ = field(6);
  t.pcln_ = field(7);
  // functab: nfunc+1 pairs of uint32 (entry offset, _func offset).
  if (t.nfunc_ > section.size() || t.pcln_ > section.size() ||
      (section.size() - t.pcln_) / 8 < t.nfunc_ + 1)
    return make_error("gopclntab function table out of range");
  return t;
}

std::optional<int32_t> GoPclntab::pc_value(uint32_t table_offset, uint64_t entry,
                                           uint64_t pc) const {
  if (table_offset == 0 || pctab_ + table_offset >= data_.size()) return std::nullopt;
  size_t pos = pctab_ + table_offset;
  int32_t value = -1;
  uint64_t at = entry;
  for (bool first = true;; first = false) {
    uint32_t uv = 0, pc_delta = 0;
    if (!read_uvarint(data_, &pos, &uv) || (uv == 0 && !first)) return std::nullopt;
    // Zig-zag: the low bit is the sign.
    auto delta = static_cast<int32_t>((uv & 1) != 0 ? ~(uv >> 1) : (uv >> 1));
    if (!read_uvarint(data_, &pos, &pc_delta)) return std::nullopt;
    at += uint64_t{pc_delta} * quantum_;
    value += delta;
    if (pc < at) return value;
  }
}

std::string GoPclntab::file_name(uint32_t cu_offset, int32_t file_index) const {
  if (file_index < 0) return {};
  uint64_t slot = cutab_ + (uint64_t{cu_offset} + static_cast<uint64_t>(file_index)) * 4;
  uint32_t off = u32(slot);
  if (off == 0xffffffff) return {};
  return c_string(filetab_ + off);
}

std::optional<GoFunction> GoPclntab::lookup(uint64_t pc) const {
  if (nfunc_ == 0 || pc < text_start_) return std::nullopt;
  uint64_t rel = pc - text_start_;
  auto entry_at = [&](uint64_t i) { return u32(pcln_ + i * 8); };
  // Last function whose entry offset is <= rel; the extra (nfunc-th) entry is the end of text.
  if (rel >= entry_at(nfunc_)) return std::nullopt;
  uint64_t lo = 0, hi = nfunc_;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (entry_at(mid) <= rel) lo = mid;
    else hi = mid;
  }
  if (entry_at(lo) > rel) return std::nullopt;
  uint64_t func = pcln_ + u32(pcln_ + lo * 8 + 4);
  // _func: entryOff u32, nameOff i32, args i32, deferreturn u32, pcsp u32, pcfile u32, pcln u32,
  // npcdata u32, cuOffset u32, (startLine i32 from 1.20), funcID u8, flag u8, _ u8, nfuncdata u8.
  if (func + 40 > data_.size()) return std::nullopt;
  GoFunction f;
  f.entry = text_start_ + u32(func);
  f.name = c_string(funcname_ + u32(func + 4));
  if (f.name.empty()) return std::nullopt;
  uint32_t pcfile = u32(func + 20), pcln = u32(func + 24), cu = u32(func + 32);
  if (auto line = pc_value(pcln, f.entry, pc)) f.line = *line;
  if (auto file = pc_value(pcfile, f.entry, pc)) f.file = file_name(cu, *file);
  return f;
}

}  // namespace gp::symbolize
