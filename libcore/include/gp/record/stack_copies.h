#pragma once
// StackCopies: gp-record's copies of the stacks in its BPF sampler's two stack maps (one per
// slot), by key. A key is a hash of the stack's frames and of how it ended, the same in both
// maps: one copy serves both, and a stack the sampler stores in each map is copied once. A flush
// reads from the kernel only stacks it has no copy of. Copies not used for kIdleDrains drains are
// dropped (the stacks of exited processes, mostly), so memory follows the stacks being sampled,
// not everything sampled since a map was last cleared. The kernel's maps keep every stack until
// cleared; `map_keys(slot)` are the keys known to be in a slot's map, so that the caller can clear
// it before it fills, in one batch (8 bytes a stack: a stack map holds at most a few tens of
// thousands). Not thread-safe.

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

namespace gp::record {

class StackCopies {
 public:
  // Reads the stack under a key from the kernel into `ips` (left empty when it is not there) and
  // how it ended into `end` (bpf/profile.h: enum gp_stack_end).
  using Reader = std::function<void(uint64_t key, std::vector<uint64_t>& ips, uint8_t& end)>;

  // The frames under key (key 0: no stack, empty): the copy, else read from slot's map with
  // `read` (and kept while in use; a stack the map does not hold is not). `end`, when given,
  // gets how the stack ended.
  const std::vector<uint64_t>& get(unsigned slot, uint64_t key, const Reader& read,
                                   uint8_t* end = nullptr);
  // The sampler stored this stack under key in slot's map and sent it: the copy from now on.
  void put(unsigned slot, uint64_t key, std::span<const uint64_t> ips, uint8_t end);
  // The end of a drain: every kIdleDrains drains, copies unused since the previous check go.
  void end_drain();
  // Slot's map was cleared (the copies stay: the other map may hold the same stacks).
  void map_cleared(unsigned slot) { map_keys_[slot & 1].clear(); }

  size_t size() const { return copies_.size(); }
  // The keys stored in slot's map since it was last cleared, each once.
  std::vector<uint64_t> map_keys(unsigned slot) const;
  // How many stacks slot's map holds, at most (a key read again after its copy went counts twice).
  uint64_t map_entries(unsigned slot) const { return map_keys_[slot & 1].size(); }
  static constexpr uint32_t kIdleDrains = 64;

 private:
  struct Copy {
    std::vector<uint64_t> ips;
    uint64_t last_drain = 0;
    uint8_t end = 0;
  };
  std::unordered_map<uint64_t, Copy> copies_;
  std::vector<uint64_t> map_keys_[2];  // appended: a set cost a node per stack
  uint64_t drains_ = 0;
};

}  // namespace gp::record
