#pragma once
// Ranges: first-fit allocation of index ranges in a fixed-size array (the BPF unwinder's arrays).
// Free ranges are kept by start and merged with their neighbours. Not thread-safe.

#include <cstdint>
#include <map>

namespace gp::unwind {

class Ranges {
 public:
  explicit Ranges(uint32_t capacity) {
    if (capacity > 0) free_[0] = capacity;
  }
  // A range of n entries: its first index in *at. False when no free range is that long.
  bool take(uint32_t n, uint32_t* at);
  // Returns [at, at + n) (taken before) to the free ranges.
  void give(uint32_t at, uint32_t n);

 private:
  std::map<uint32_t, uint32_t> free_;  // start -> length
};

}  // namespace gp::unwind
