#include "gp/unwind/ranges.h"

#include <iterator>

namespace gp::unwind {

bool Ranges::take(uint32_t n, uint32_t* at) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < n) continue;
    *at = it->first;
    uint32_t rest = it->second - n;
    free_.erase(it);
    if (rest > 0) free_[*at + n] = rest;
    return true;
  }
  return false;
}

void Ranges::give(uint32_t at, uint32_t n) {
  if (n == 0) return;
  auto next = free_.lower_bound(at);
  if (next != free_.end() && at + n == next->first) {  // merge with the range after
    n += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {  // merge with the range before
      prev->second += n;
      return;
    }
  }
  free_[at] = n;
}

}  // namespace gp::unwind
