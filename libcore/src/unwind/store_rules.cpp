// StoreRuleSource: gp_find_mapping and gp_find_row (bpf/profile.bpf.c) over the store's arrays.
#include "gp/unwind/store_rules.h"

#include <algorithm>

namespace gp::unwind {

std::optional<PackedRule> StoreRuleSource::rule_at(uint64_t address) const {
  // The mapping with the greatest start at or below the address.
  auto after = std::upper_bound(mappings_.begin(), mappings_.end(), address,
                                [](uint64_t a, const MappingTable& m) { return a < m.start; });
  if (after == mappings_.begin()) return std::nullopt;
  const MappingTable& m = *(after - 1);
  if (address >= m.end || address < m.bias || m.slot >= arrays_.slots.size()) return std::nullopt;
  const TableSlot& slot = arrays_.slots[m.slot];
  const uint64_t rel = address - m.bias;
  if ((rel >> kPageShift) >= slot.page_count) return std::nullopt;
  const uint64_t page_index = uint64_t{slot.page_base} + (rel >> kPageShift);
  if (page_index >= arrays_.pages.size()) return std::nullopt;
  const PackedPage& page = arrays_.pages[page_index];
  if (page.count == 0) return std::nullopt;
  const uint64_t first = uint64_t{slot.row_base} + page.first_row;
  const uint64_t last = std::min<uint64_t>(first + page.count, arrays_.rows.size());
  if (first >= last) return std::nullopt;
  const uint32_t in_page = static_cast<uint32_t>(rel & ((uint64_t{1} << kPageShift) - 1));
  // Row 0 is in force from the page's start; the rows after it start in the page, in order.
  uint64_t found = first;
  for (uint64_t i = first + 1; i < last && arrays_.rows[i].pc <= in_page; ++i) found = i;
  const uint32_t rule = arrays_.rows[found].rule;
  if (rule >= arrays_.rules.size()) return std::nullopt;
  return arrays_.rules[rule];
}

}  // namespace gp::unwind
