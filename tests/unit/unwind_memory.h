#pragma once
// The unwind arrays in memory for TableStore and ProcessTables tests: every write bounds-checked
// (a failed check fails the test and the write), and the BPF walker's lookup over them.

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

#include "gp/unwind/process_tables.h"
#include "gp/unwind/table_store.h"

namespace gp::test::unwind {

struct ArrayMemory : gp::unwind::TableMemory {
  using PackedPage = gp::unwind::PackedPage;
  using PackedRow = gp::unwind::PackedRow;
  using PackedRule = gp::unwind::PackedRule;
  using TableSlot = gp::unwind::TableSlot;

  explicit ArrayMemory(gp::unwind::StoreLimits l)
      : rules(l.rules), rows(l.rows), pages(l.pages), slots(l.slots) {}
  bool write_rules(uint32_t at, std::span<const PackedRule> r) override {
    return write(rules, at, r);
  }
  bool write_rows(uint32_t at, std::span<const PackedRow> r) override { return write(rows, at, r); }
  bool write_pages(uint32_t at, std::span<const PackedPage> p) override {
    return write(pages, at, p);
  }
  bool write_slot(uint32_t slot, const TableSlot& where) override {
    return write(slots, slot, std::span<const TableSlot>(&where, 1));
  }

  // What the BPF walker does: mapping -> page -> the row in force at the page's start, or the
  // last of the page's own rows at or below the offset in the page -> its shared rule.
  const PackedRule* rule_at(const std::vector<gp::unwind::MappingTable>& entries,
                            uint64_t address) const {
    for (const auto& e : entries) {
      if (address < e.start || address >= e.end) continue;
      const TableSlot& t = slots[e.slot];
      uint64_t rel = address - e.bias;
      if ((rel >> 12) >= t.page_count) return nullptr;
      const PackedPage& p = pages[t.page_base + (rel >> 12)];
      uint32_t found = 0;
      for (uint32_t i = 1; i < p.count; ++i)
        if (rows[t.row_base + p.first_row + i].pc <= (rel & 4095)) found = i;
      return &rules[rows[t.row_base + p.first_row + found].rule];
    }
    return nullptr;
  }

  std::vector<PackedRule> rules;
  std::vector<PackedRow> rows;
  std::vector<PackedPage> pages;
  std::vector<TableSlot> slots;

 private:
  template <typename T>
  static bool write(std::vector<T>& to, uint32_t at, std::span<const T> values) {
    EXPECT_LE(size_t{at} + values.size(), to.size()) << "written past the array";
    if (size_t{at} + values.size() > to.size()) return false;
    std::copy(values.begin(), values.end(), to.begin() + at);
    return true;
  }
};

}  // namespace gp::test::unwind
