#include "gp/record/stack_copies.h"

namespace gp::record {

const std::vector<uint64_t>& StackCopies::get(uint64_t key, const Reader& read) {
  static const std::vector<uint64_t> none;
  if (key == 0) return none;  // no stack: the sample key's error says why
  auto [it, inserted] = copies_.try_emplace(key);
  if (inserted) {
    read(key, it->second.ips);
    ++map_entries_;
  }
  it->second.last_drain = drains_;
  return it->second.ips;
}

void StackCopies::end_drain() {
  if (++drains_ % kIdleDrains != 0) return;
  std::erase_if(copies_, [&](const auto& entry) { return entry.second.last_drain + kIdleDrains < drains_; });
}

void StackCopies::clear() {
  copies_.clear();
  map_entries_ = 0;
}

}  // namespace gp::record
