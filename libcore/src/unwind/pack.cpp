// Table → the BPF maps' rows and page directory (bpf/profile.h).

#include <string>

#include "gp/unwind/table.h"

namespace gp::unwind {
namespace {

PackedRow pack_row(const Row& row, uint64_t base) {
  PackedRow out{static_cast<uint32_t>(row.address - base), 0, static_cast<uint8_t>(row.rule), 0};
  if (row.rule != Rule::rsp && row.rule != Rule::rbp && row.rule != Rule::plt) return out;
  const bool cfa_fits = row.cfa_offset >= 0 && row.cfa_offset <= 0xffff;
  const bool rbp_fits =
      row.rbp_offset % 8 == 0 && row.rbp_offset >= -128 * 8 && row.rbp_offset <= 127 * 8;
  if (!cfa_fits || !rbp_fits) {
    out.kind = static_cast<uint8_t>(Rule::unsupported);
    return out;
  }
  out.cfa_offset = static_cast<uint16_t>(row.cfa_offset);
  out.rbp_offset = static_cast<int8_t>(row.rbp_offset / 8);
  return out;
}

bool same_rule(const PackedRow& a, const PackedRow& b) {
  return a.kind == b.kind && a.cfa_offset == b.cfa_offset && a.rbp_offset == b.rbp_offset;
}

}  // namespace

Result<PackedTable> pack(const Table& table) {
  PackedTable out;
  if (table.rows.empty()) return out;
  constexpr uint64_t kPage = uint64_t{1} << kPageShift;
  out.base = table.rows.front().address & ~(kPage - 1);
  const uint64_t span = table.rows.back().address - out.base;
  if (span > 0xffffffffu) {
    return make_error("unwind table spans " + std::to_string(span) + " bytes (more than 4 GiB)");
  }
  out.rows.reserve(table.rows.size() + 1);
  if (table.rows.front().address != out.base) {
    out.rows.push_back(PackedRow{0, 0, static_cast<uint8_t>(Rule::none), 0});
  }
  for (const Row& row : table.rows) {
    const PackedRow packed = pack_row(row, out.base);
    if (!out.rows.empty() && same_rule(out.rows.back(), packed)) continue;
    out.rows.push_back(packed);
  }
  // One entry per page of [base, last row]: rows are sorted, so one pass fills them all.
  const uint64_t pages = (span >> kPageShift) + 1;
  out.pages.resize(pages);
  size_t first = 0;  // the row in force at the current page's first byte
  for (uint64_t p = 0; p < pages; ++p) {
    const uint64_t page_start = p << kPageShift;
    while (first + 1 < out.rows.size() && out.rows[first + 1].pc <= page_start) ++first;
    size_t last = first;
    while (last + 1 < out.rows.size() && out.rows[last + 1].pc < page_start + kPage) ++last;
    out.pages[p] =
        PackedPage{static_cast<uint32_t>(first), static_cast<uint32_t>(last - first + 1)};
  }
  return out;
}

}  // namespace gp::unwind
