#include "gp/record/stack_copies.h"

#include <algorithm>

namespace gp::record {

const std::vector<uint64_t>& StackCopies::get(unsigned slot, uint64_t key, const Reader& read,
                                              uint8_t* end) {
  static const std::vector<uint64_t> none;
  if (end != nullptr) *end = 0;
  if (key == 0) return none;  // no stack: the sample key's error says why
  auto it = copies_.find(key);
  if (it == copies_.end()) {
    Copy copy;
    read(key, copy.ips, copy.end);
    if (copy.ips.empty()) return none;  // not in the map: the other slot's may have it
    map_keys_[slot & 1].push_back(key);
    it = copies_.emplace(key, std::move(copy)).first;
  }
  it->second.last_drain = drains_;
  if (end != nullptr) *end = it->second.end;
  return it->second.ips;
}

void StackCopies::put(unsigned slot, uint64_t key, std::span<const uint64_t> ips, uint8_t end) {
  if (key == 0 || ips.empty()) return;
  map_keys_[slot & 1].push_back(key);
  auto [it, inserted] = copies_.try_emplace(key);
  if (inserted) {
    it->second.ips.assign(ips.begin(), ips.end());
    it->second.end = end;
  }
  it->second.last_drain = drains_;
}

void StackCopies::end_drain() {
  if (++drains_ % kIdleDrains != 0) return;
  std::erase_if(copies_,
                [&](const auto& entry) { return entry.second.last_drain + kIdleDrains < drains_; });
}

std::vector<uint64_t> StackCopies::map_keys(unsigned slot) const {
  std::vector<uint64_t> keys = map_keys_[slot & 1];
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace gp::record
