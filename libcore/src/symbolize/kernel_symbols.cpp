#include "gp/symbolize/kernel_symbols.h"

#include <algorithm>

namespace gp::symbolize {

KernelSymbols::KernelSymbols(const std::vector<model::KernelSymbol>& symbols) : symbols_(symbols) {
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
}

std::optional<std::string> KernelSymbols::lookup(uint64_t address) const {
  auto it =
      std::upper_bound(symbols_.begin(), symbols_.end(), address,
                       [](uint64_t a, const model::KernelSymbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return std::nullopt;
  --it;
  // Past the last entry nothing bounds the symbol; refuse implausibly distant matches.
  if (std::next(it) == symbols_.end() && address - it->address >= kMaxSymbolSize)
    return std::nullopt;
  if (it->module.empty()) return it->name;
  return it->name + " [" + it->module + "]";
}

JitSymbols::JitSymbols(const std::vector<model::JitMap>& maps) {
  for (const auto& map : maps) {
    auto& ranges = by_pid_[map.pid];
    for (const auto& e : map.entries) {
      if (e.size == 0) continue;
      ranges.push_back({e.start, e.start + e.size, ranges.size(), e.name});
      max_size_[map.pid] = std::max(max_size_[map.pid], e.size);
    }
  }
  for (auto& [pid, ranges] : by_pid_)
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const Range& a, const Range& b) { return a.start < b.start; });
}

std::optional<std::string> JitSymbols::lookup(int32_t pid, uint64_t address) const {
  auto found = by_pid_.find(pid);
  if (found == by_pid_.end()) return std::nullopt;
  const auto& ranges = found->second;
  auto it = std::upper_bound(ranges.begin(), ranges.end(), address,
                             [](uint64_t a, const Range& r) { return a < r.start; });
  const Range* best = nullptr;
  // Entries may overlap (code regenerated in place): every earlier start is a candidate, and
  // the one written last to the map wins. No entry is longer than max_size, which bounds the scan.
  auto longest = max_size_.find(pid);
  uint64_t max_size = longest == max_size_.end() ? 0 : longest->second;
  while (it != ranges.begin()) {
    --it;
    if (address - it->start >= max_size) break;
    if (address < it->end && (best == nullptr || it->order > best->order)) best = &*it;
  }
  if (best == nullptr) return std::nullopt;
  return best->name;
}

}  // namespace gp::symbolize
