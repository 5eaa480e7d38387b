#pragma once
// Packer: rows in address order → the BPF maps' PackedTable (table.h), one row at a time, so a
// table can be packed while it is compiled without the 32-byte rows of a whole Table in memory
// (a large binary has a million rows; fresh memory costs a page fault per 4 KiB). pack() is a
// Packer over a Table's rows.

#include <array>
#include <string>
#include <unordered_map>
#include <utility>

#include "gp/unwind/table.h"

namespace gp::unwind {

class Packer {
 public:
  Packer();
  // Room for this many rows (a bound, not a promise).
  void reserve(size_t rows) { out_.rows.reserve(rows); }
  // Adds a row whose address is above every earlier row's; false (see finish) when the table is
  // wider than 4 GiB or has more than kMaxPackedRules distinct rules.
  bool add(const Row& row);
  // The packed table, or why it could not be packed; the Packer is spent after.
  Result<PackedTable> finish();

 private:
  static PackedRule pack_rule(const Row& row);
  // The rule's index in out_.rules (added when new); false when the rules are full.
  bool rule_index(const PackedRule& rule, uint16_t* at);
  bool append(uint32_t offset, const PackedRule& rule);

  PackedTable out_;
  bool started_ = false;
  uint64_t last_offset_ = 0;  // of the last row given (merged or not)
  std::unordered_map<uint32_t, uint16_t> index_;  // a rule's bits -> its index
  // The index of recently seen rules by a hash of their bits (a table alternates between a few).
  std::array<std::pair<uint32_t, uint16_t>, 64> recent_;
  std::string error_;
};

}  // namespace gp::unwind
