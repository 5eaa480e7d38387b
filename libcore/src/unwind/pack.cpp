// Table → the BPF maps' rows, rules and page directory (bpf/profile.h).

#include <string>
#include <unordered_map>

#include "gp/unwind/table.h"

namespace gp::unwind {
namespace {

PackedRule pack_rule(const Row& row) {
  PackedRule out{0, static_cast<uint8_t>(row.rule), 0};
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
  // Rows with their whole offset first (the pages need it), then cut to the offset in the page.
  std::vector<uint32_t> offsets;
  offsets.reserve(table.rows.size() + 1);
  out.rows.reserve(table.rows.size() + 1);
  std::unordered_map<uint32_t, uint16_t> index;
  auto add = [&](uint32_t offset, const PackedRule& rule) -> bool {
    if (!out.rows.empty() && out.rules[out.rows.back().rule] == rule) return true;  // merged
    auto [it, fresh] = index.try_emplace(rule.bits(), static_cast<uint16_t>(out.rules.size()));
    if (fresh) {
      if (out.rules.size() == kMaxPackedRules) return false;
      out.rules.push_back(rule);
    }
    offsets.push_back(offset);
    out.rows.push_back(PackedRow{static_cast<uint16_t>(offset & (kPage - 1)), it->second});
    return true;
  };
  if (table.rows.front().address != out.base)
    add(0, PackedRule{0, static_cast<uint8_t>(Rule::none), 0});
  for (const Row& row : table.rows) {
    if (!add(static_cast<uint32_t>(row.address - out.base), pack_rule(row)))
      return make_error("unwind table has more than " + std::to_string(kMaxPackedRules) +
                        " distinct rules");
  }
  // One entry per page of [base, last row]: rows are sorted, so one pass fills them all.
  const uint64_t pages = (span >> kPageShift) + 1;
  out.pages.resize(pages);
  size_t first = 0;  // the row in force at the current page's first byte
  for (uint64_t p = 0; p < pages; ++p) {
    const uint64_t page_start = p << kPageShift;
    while (first + 1 < offsets.size() && offsets[first + 1] <= page_start) ++first;
    size_t last = first;
    while (last + 1 < offsets.size() && offsets[last + 1] < page_start + kPage) ++last;
    out.pages[p] =
        PackedPage{static_cast<uint32_t>(first), static_cast<uint32_t>(last - first + 1)};
  }
  return out;
}

const PackedRule* packed_rule_at(const PackedTable& table, uint64_t address) {
  if (address < table.base) return nullptr;
  const uint64_t offset = address - table.base;
  const uint64_t page = offset >> kPageShift;
  if (page >= table.pages.size()) return nullptr;
  const PackedPage& pg = table.pages[page];
  const uint32_t in_page = static_cast<uint32_t>(offset & ((uint64_t{1} << kPageShift) - 1));
  uint32_t found = pg.first_row;  // in force at the page's start
  for (uint32_t i = pg.first_row + 1; i < pg.first_row + pg.count; ++i)
    if (table.rows[i].pc <= in_page) found = i;
  return &table.rules[table.rows[found].rule];
}

}  // namespace gp::unwind
