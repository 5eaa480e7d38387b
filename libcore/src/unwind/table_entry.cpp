// The on-disk form of a cached unwind table (table_cache.h), little-endian as the host:
//   "GPUWTAB1"  u32 version  u32 build-id bytes  u64 binary size  u64 table base
//   u32 rows  u32 pages  u32 rules  u32 segments  build-id  rows  pages  rules  segments
//   u64 checksum of everything before it
// Decoding trusts nothing: sizes, counts, the checksum and the table's own consistency are all
// checked (the BPF walker and the user-space walker index rules and rows with what it holds).

#include <cstring>

#include "gp/unwind/table_cache.h"

namespace gp::unwind {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'W', 'T', 'A', 'B', '1'};
constexpr uint32_t kMaxBuildId = 64;
constexpr uint64_t kMaxPages = uint64_t{1} << 20;  // 4 GiB of addresses
constexpr uint64_t kMaxSegments = 4096;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t build_id_bytes;
  uint64_t file_size;
  uint64_t base;
  uint32_t rows, pages, rules, segments;
};
static_assert(sizeof(Header) == 48);

// A word-at-a-time 64-bit hash: catches torn and flipped bytes (not an adversary: the
// directory's ownership keeps those out), at a few GB/s.
uint64_t checksum(const uint8_t* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  auto mix = [&](uint64_t w) {
    h ^= w;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  mix(tail);
  return h;
}

template <typename T>
void put(std::vector<uint8_t>& out, const T* values, size_t n) {
  const auto* b = reinterpret_cast<const uint8_t*>(values);
  out.insert(out.end(), b, b + n * sizeof(T));
}

template <typename T>
void take(const uint8_t*& p, std::vector<T>& out, size_t n) {
  out.resize(n);
  if (n) std::memcpy(out.data(), p, n * sizeof(T));
  p += n * sizeof(T);
}

Status check_table(const PackedTable& t, const std::vector<Segment>& segments) {
  if (t.rows.empty() || t.pages.empty() || t.rules.empty() || segments.empty())
    return make_error("empty table");
  if (t.base % 4096 != 0) return make_error("table base not page-aligned");
  if (t.rows[0].pc != 0) return make_error("first row not at the table's base");
  for (const PackedRow& r : t.rows)
    if (r.rule >= t.rules.size()) return make_error("a row names an absent rule");
  for (const PackedRule& r : t.rules)
    if (!packed_kind_known(r.kind)) return make_error("unknown rule kind");
  for (const PackedPage& pg : t.pages) {
    if (pg.count == 0 || uint64_t{pg.first_row} + pg.count > t.rows.size())
      return make_error("a page names rows past the table");
    for (uint32_t k = pg.first_row + 2; k < pg.first_row + pg.count; ++k)
      if (t.rows[k - 1].pc >= t.rows[k].pc) return make_error("rows out of order");
  }
  return ok_status();
}

}  // namespace

std::vector<uint8_t> encode_table_entry(const std::string& build_id, uint64_t file_size,
                                        const LoadedBinary& b) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kTableEntryVersion;
  h.build_id_bytes = static_cast<uint32_t>(build_id.size());
  h.file_size = file_size;
  h.base = b.table.base;
  h.rows = static_cast<uint32_t>(b.table.rows.size());
  h.pages = static_cast<uint32_t>(b.table.pages.size());
  h.rules = static_cast<uint32_t>(b.table.rules.size());
  h.segments = static_cast<uint32_t>(b.segments.size());
  std::vector<uint8_t> out;
  out.reserve(sizeof(h) + build_id.size() + h.rows * 4 + h.pages * 8 + h.rules * 4 +
              h.segments * sizeof(Segment) + 8);
  put(out, &h, 1);
  put(out, build_id.data(), build_id.size());
  put(out, b.table.rows.data(), b.table.rows.size());
  put(out, b.table.pages.data(), b.table.pages.size());
  put(out, b.table.rules.data(), b.table.rules.size());
  put(out, b.segments.data(), b.segments.size());
  const uint64_t sum = checksum(out.data(), out.size());
  put(out, &sum, 1);
  return out;
}

Result<LoadedBinary> decode_table_entry(std::span<const uint8_t> bytes, const std::string& build_id,
                                        uint64_t file_size) {
  Header h{};
  if (bytes.size() < sizeof(h) + 8) return make_error("truncated");
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) return make_error("not a table entry");
  if (h.version != kTableEntryVersion) return make_error("entry version " + std::to_string(h.version));
  if (h.build_id_bytes > kMaxBuildId || h.rows > kMaxRows + 1 || h.pages > kMaxPages ||
      h.rules > kMaxPackedRules || h.segments > kMaxSegments)
    return make_error("counts out of bounds");
  const uint64_t want = sizeof(h) + uint64_t{h.build_id_bytes} + uint64_t{h.rows} * 4 +
                        uint64_t{h.pages} * 8 + uint64_t{h.rules} * 4 +
                        uint64_t{h.segments} * sizeof(Segment) + 8;
  if (bytes.size() != want) return make_error(bytes.size() < want ? "truncated" : "trailing bytes");
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + want - 8, 8);
  if (sum != checksum(bytes.data(), want - 8)) return make_error("bad checksum");
  const uint8_t* p = bytes.data() + sizeof(h);
  if (std::string(reinterpret_cast<const char*>(p), h.build_id_bytes) != build_id)
    return make_error("entry is for another build-id");
  p += h.build_id_bytes;
  if (h.file_size != file_size)
    return make_error("entry is for a binary of " + std::to_string(h.file_size) + " bytes, not " +
                      std::to_string(file_size));
  LoadedBinary b;
  b.table.base = h.base;
  take(p, b.table.rows, h.rows);
  take(p, b.table.pages, h.pages);
  take(p, b.table.rules, h.rules);
  take(p, b.segments, h.segments);
  if (Status s = check_table(b.table, b.segments); !s) return s.error();
  return b;
}

}  // namespace gp::unwind
