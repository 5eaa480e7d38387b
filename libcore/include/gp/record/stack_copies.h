#pragma once
// StackCopies: gp-record's copies of the stacks in one of its BPF sampler's stack maps, by key.
// A flush reads from the kernel only stacks it has no copy of. Copies not used for kIdleDrains
// drains are dropped (the stacks of exited processes, mostly), so memory follows the stacks
// being sampled, not everything sampled since the map was last cleared. The kernel's map keeps
// every stack until it is cleared; `map_keys()` are the keys of those read from it, so that the
// caller can clear the map before it fills, in one batch (8 bytes a stack: a stack map holds at
// most a few tens of thousands). A sampler that sends each stack as it stores it gives the copy
// with put(), and get() then reads nothing. Not thread-safe.

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gp::record {

class StackCopies {
 public:
  // Reads the stack under a key from the kernel into `ips` (left empty when it is not there) and
  // how it ended into `end` (bpf/profile.h: enum gp_stack_end).
  using Reader = std::function<void(uint64_t key, std::vector<uint64_t>& ips, uint8_t& end)>;

  // The frames under key (key 0: no stack, empty), read once while the copy is in use; `end`,
  // when given, gets how the stack ended.
  const std::vector<uint64_t>& get(uint64_t key, const Reader& read, uint8_t* end = nullptr);
  // The stack the sampler stored under key, as it sent it: the copy get() gives from now on.
  void put(uint64_t key, std::span<const uint64_t> ips, uint8_t end);
  // The end of a drain: every kIdleDrains drains, copies unused since the previous check go.
  void end_drain();
  // The kernel's map was cleared.
  void clear();

  size_t size() const { return copies_.size(); }
  // Every key found in the kernel's map since it was last cleared, each once.
  const std::unordered_set<uint64_t>& map_keys() const { return map_keys_; }
  uint64_t map_entries() const { return map_keys_.size(); }
  static constexpr uint32_t kIdleDrains = 64;

 private:
  struct Copy {
    std::vector<uint64_t> ips;
    uint64_t last_drain = 0;
    uint8_t end = 0;
  };
  std::unordered_map<uint64_t, Copy> copies_;
  std::unordered_set<uint64_t> map_keys_;
  uint64_t drains_ = 0;
};

}  // namespace gp::record
