#include "gp/unwind/table_store.h"

namespace gp::unwind {

Result<TableStore::Acquired> TableStore::acquire(const std::string& key, const Builder& build) {
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    Entry& e = slots_.at(it->second);
    if (e.users++ == 0) unused_.erase(e.lru);
    return Acquired{it->second, &e.info};
  }
  if (auto f = failed_.find(key); f != failed_.end()) return make_error(f->second);
  auto table = build();
  if (!table) {
    if (failed_.size() >= kMaxFailedKeys) failed_.clear();
    failed_[key] = table.error().message;
    ++stats_.failed;
    return table.error();
  }
  return load(key, std::move(*table));
}

Result<TableStore::Acquired> TableStore::load(const std::string& key, LoadedBinary&& binary) {
  const PackedTable& table = binary.table;
  const auto rows = static_cast<uint32_t>(table.rows.size());
  const auto pages = static_cast<uint32_t>(table.pages.size());
  if (table.rows.size() > limits_.rows || table.pages.size() > limits_.pages) {
    ++stats_.no_room;
    return make_error("its table (" + std::to_string(rows) +
                      " rows) is larger than --unwind-memory allows");
  }
  if (auto shared = to_shared_rules(table); !shared) {
    ++stats_.no_room;
    return shared.error();
  }
  TableSlot where{0, rows, 0, pages};
  for (;;) {
    bool have_rows = rows_.take(rows, &where.row_base);
    bool have_pages = have_rows && pages_.take(pages, &where.page_base);
    if (have_rows && !have_pages) rows_.give(where.row_base, rows);
    bool have_slot = have_pages && (!free_slots_.empty() || next_slot_ < limits_.slots);
    if (have_pages && !have_slot) {
      rows_.give(where.row_base, rows);
      pages_.give(where.page_base, pages);
    }
    if (have_slot) break;
    // Freed ranges may not be next to each other: evict until the table fits or none is left.
    if (!evict_one()) {
      ++stats_.no_room;
      return make_error("no room for its table (" + std::to_string(rows) +
                        " rows): raise --unwind-memory");
    }
  }
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = next_slot_++;
  }
  if (!memory_.write_rows(where.row_base, shared_rows_) ||
      !memory_.write_pages(where.page_base, table.pages) || !memory_.write_slot(slot, where)) {
    rows_.give(where.row_base, rows);
    pages_.give(where.page_base, pages);
    free_slots_.push_back(slot);
    return make_error("cannot write its table into the BPF maps");
  }
  Entry& e = slots_[slot];
  e.key = key;
  e.where = where;
  e.users = 1;
  e.info = TableInfo{table.base, std::move(binary.segments)};
  by_key_[key] = slot;
  ++stats_.loaded;
  ++stats_.tables;
  stats_.rows_used += rows;
  stats_.pages_used += pages;
  return Acquired{slot, &e.info};
}

Status TableStore::to_shared_rules(const PackedTable& table) {
  local_to_shared_.resize(table.rules.size());
  for (size_t i = 0; i < table.rules.size(); ++i) {
    const PackedRule& r = table.rules[i];
    auto it = shared_rules_.find(r.bits());
    if (it == shared_rules_.end()) {
      const auto at = static_cast<uint32_t>(shared_rules_.size());
      if (at >= limits_.rules || at > 0xffff)
        return make_error("no room for its rules (" + std::to_string(at) +
                          " distinct rules loaded)");
      if (!memory_.write_rules(at, std::span<const PackedRule>(&r, 1)))
        return make_error("cannot write its rules into the BPF maps");
      it = shared_rules_.emplace(r.bits(), at).first;
      ++stats_.rules;
    }
    local_to_shared_[i] = static_cast<uint16_t>(it->second);
  }
  shared_rows_.resize(table.rows.size());
  for (size_t i = 0; i < table.rows.size(); ++i)
    shared_rows_[i] = PackedRow{table.rows[i].pc, local_to_shared_[table.rows[i].rule]};
  return ok_status();
}

void TableStore::release(uint32_t slot) {
  auto it = slots_.find(slot);
  if (it == slots_.end() || it->second.users == 0) return;
  if (--it->second.users == 0) it->second.lru = unused_.insert(unused_.end(), slot);
}

bool TableStore::evict_one() {
  if (unused_.empty()) return false;
  uint32_t slot = unused_.front();
  unused_.pop_front();
  drop(slot);
  ++stats_.evicted;
  return true;
}

void TableStore::drop(uint32_t slot) {
  Entry& e = slots_.at(slot);
  rows_.give(e.where.row_base, e.where.row_count);
  pages_.give(e.where.page_base, e.where.page_count);
  stats_.rows_used -= e.where.row_count;
  stats_.pages_used -= e.where.page_count;
  --stats_.tables;
  by_key_.erase(e.key);
  // No process entry names the slot any more: it can be reused as it is (its old slot value is
  // overwritten before any process entry names it again).
  slots_.erase(slot);
  free_slots_.push_back(slot);
}

}  // namespace gp::unwind
