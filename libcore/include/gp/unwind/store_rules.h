#pragma once
// StoreRuleSource: the rules of one process as the BPF unwinder finds them in the arrays a
// TableStore fills (bpf/profile.bpf.c: gp_find_mapping, gp_find_row): the process's mapped tables
// (sorted by start), each naming a table slot, whose pages and rows are ranges of the shared
// arrays, whose rows name rules of the shared rule array. For walk_stack on a stack copy of a
// process whose tables are loaded (gp-record's deferred unwinding). Every index is checked: a
// torn or stale entry gives no rule, never a read out of bounds. Only reads.

#include <optional>
#include <span>

#include "gp/unwind/process_tables.h"
#include "gp/unwind/stack_walker.h"
#include "gp/unwind/table_store.h"

namespace gp::unwind {

// The arrays (views of the BPF maps' memory, or of vectors in tests).
struct StoreArrays {
  std::span<const PackedRule> rules;
  std::span<const PackedRow> rows;
  std::span<const PackedPage> pages;
  std::span<const TableSlot> slots;
};

class StoreRuleSource : public RuleSource {
 public:
  // `mappings` sorted by start, as ProcessTables::update gives them; both must outlive this.
  StoreRuleSource(const StoreArrays& arrays, std::span<const MappingTable> mappings)
      : arrays_(arrays), mappings_(mappings) {}
  std::optional<PackedRule> rule_at(uint64_t address) const override;

 private:
  StoreArrays arrays_;
  std::span<const MappingTable> mappings_;
};

}  // namespace gp::unwind
