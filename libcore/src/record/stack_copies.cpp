#include "gp/record/stack_copies.h"

namespace gp::record {

const std::vector<uint64_t>& StackCopies::get(uint64_t key, const Reader& read, uint8_t* end) {
  static const std::vector<uint64_t> none;
  if (end != nullptr) *end = 0;
  if (key == 0) return none;  // no stack: the sample key's error says why
  auto [it, inserted] = copies_.try_emplace(key);
  if (inserted) {
    read(key, it->second.ips, it->second.end);
    if (!it->second.ips.empty()) map_keys_.insert(key);  // not there: nothing to delete
  }
  it->second.last_drain = drains_;
  if (end != nullptr) *end = it->second.end;
  return it->second.ips;
}

void StackCopies::put(uint64_t key, std::span<const uint64_t> ips, uint8_t end) {
  if (key == 0 || ips.empty()) return;
  auto [it, inserted] = copies_.try_emplace(key);
  if (inserted) {
    it->second.ips.assign(ips.begin(), ips.end());
    it->second.end = end;
    map_keys_.insert(key);
  }
  it->second.last_drain = drains_;
}

void StackCopies::end_drain() {
  if (++drains_ % kIdleDrains != 0) return;
  std::erase_if(copies_,
                [&](const auto& entry) { return entry.second.last_drain + kIdleDrains < drains_; });
}

void StackCopies::clear() {
  copies_.clear();
  map_keys_.clear();
}

}  // namespace gp::record
