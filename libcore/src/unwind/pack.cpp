// Table → the BPF maps' rows, rules and page directory (bpf/profile.h).

#include <string>

#include "gp/unwind/table.h"
#include "unwind/packer.h"

namespace gp::unwind {

namespace {
constexpr uint64_t kPage = uint64_t{1} << kPageShift;
}  // namespace

Packer::Packer() { recent_.fill({~uint32_t{0}, 0}); }  // no rule has these bits (kind 255)

bool packed_kind_known(uint8_t kind) {
  const auto rule = static_cast<Rule>(kind & kKindMask);
  if (rule == Rule::deref_rsp || rule == Rule::deref_rbp) return true;
  if (rule == Rule::reg) return (kind >> kAddShift) != 6 && (kind >> kAddShift) != 7;
  return kind <= static_cast<uint8_t>(Rule::unsupported);
}

PackedRule Packer::pack_rule(const Row& row) {
  PackedRule out{0, static_cast<uint8_t>(row.rule), 0};
  const bool deref = row.rule == Rule::deref_rsp || row.rule == Rule::deref_rbp;
  const bool reg = row.rule == Rule::reg;
  if (row.rule != Rule::rsp && row.rule != Rule::rbp && row.rule != Rule::plt && !deref && !reg)
    return out;
  const bool cfa_fits = deref ? row.cfa_offset >= -0x8000 && row.cfa_offset <= 0x7fff
                              : row.cfa_offset >= 0 && row.cfa_offset <= 0xffff;
  const bool rbp_fits =
      row.rbp_offset % 8 == 0 && row.rbp_offset >= -128 * 8 && row.rbp_offset <= 127 * 8;
  const bool add_fits =
      row.cfa_add % 8 == 0 && row.cfa_add >= 0 && row.cfa_add <= int64_t{kKindMask} * 8;
  const bool reg_fits =
      row.cfa_register <= kKindMask && row.cfa_register != 6 && row.cfa_register != 7;
  if (!cfa_fits || !rbp_fits || (deref && !add_fits) || (reg && !reg_fits)) {
    out.kind = static_cast<uint8_t>(Rule::unsupported);
    return out;
  }
  out.cfa_offset = static_cast<uint16_t>(row.cfa_offset);
  out.rbp_offset = static_cast<int8_t>(row.rbp_offset / 8);
  if (deref) out.kind |= static_cast<uint8_t>((row.cfa_add / 8) << kAddShift);
  if (reg) out.kind |= static_cast<uint8_t>(row.cfa_register << kAddShift);
  return out;
}

bool Packer::rule_index(const PackedRule& rule, uint16_t* at) {
  const uint32_t bits = rule.bits();
  auto& hint = recent_[(bits ^ (bits >> 16) ^ (bits >> 24)) & (recent_.size() - 1)];
  if (hint.first == bits) {
    *at = hint.second;
    return true;
  }
  auto [it, fresh] = index_.try_emplace(bits, static_cast<uint16_t>(out_.rules.size()));
  if (fresh) {
    if (out_.rules.size() == kMaxPackedRules) {
      index_.erase(it);
      return false;
    }
    out_.rules.push_back(rule);
  }
  hint = {bits, it->second};
  *at = it->second;
  return true;
}

// Pages are filled as rows come: a page before the new row's has the previous row in force all
// through; the new row's page has it in force from its first byte, or counts it among the rows
// that start inside.
bool Packer::append(uint32_t offset, const PackedRule& rule) {
  if (!out_.rows.empty() && out_.rules[out_.rows.back().rule] == rule) return true;  // merged
  uint16_t at = 0;
  if (!rule_index(rule, &at)) {
    error_ = "unwind table has more than " + std::to_string(kMaxPackedRules) + " distinct rules";
    return false;
  }
  const auto row = static_cast<uint32_t>(out_.rows.size());
  out_.rows.push_back(PackedRow{static_cast<uint16_t>(offset & (kPage - 1)), at});
  const uint64_t page = offset >> kPageShift;
  if (row == 0) {
    out_.pages.push_back(PackedPage{0, 1});  // the first row is at offset 0
  } else if (page + 1 == out_.pages.size()) {
    ++out_.pages.back().count;
  } else {
    while (out_.pages.size() < page) out_.pages.push_back(PackedPage{row - 1, 1});
    const bool at_start = (offset & (kPage - 1)) == 0;
    out_.pages.push_back(at_start ? PackedPage{row, 1} : PackedPage{row - 1, 2});
  }
  return true;
}

bool Packer::add(const Row& row) {
  if (!error_.empty()) return false;
  if (!started_) {
    started_ = true;
    out_.base = row.address & ~(kPage - 1);
    // A `none` row first, so every address from base on has a row in force.
    if (row.address != out_.base) append(0, PackedRule{0, static_cast<uint8_t>(Rule::none), 0});
  }
  const uint64_t offset = row.address - out_.base;
  if (offset > 0xffffffffu) {
    error_ = "unwind table spans " + std::to_string(offset) + " bytes (more than 4 GiB)";
    return false;
  }
  last_offset_ = offset;
  return append(static_cast<uint32_t>(offset), pack_rule(row));
}

Result<PackedTable> Packer::finish() {
  if (!error_.empty()) return make_error(error_);
  if (out_.rows.empty()) return PackedTable{};
  // Pages up to the last row given, also when it merged into an earlier one.
  const auto last_row = static_cast<uint32_t>(out_.rows.size() - 1);
  while (out_.pages.size() <= (last_offset_ >> kPageShift))
    out_.pages.push_back(PackedPage{last_row, 1});
  index_.clear();
  return std::move(out_);
}

Result<PackedTable> pack(const Table& table) {
  Packer packer;
  packer.reserve(table.rows.size() + 1);
  for (const Row& row : table.rows)
    if (!packer.add(row)) break;
  return packer.finish();
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
