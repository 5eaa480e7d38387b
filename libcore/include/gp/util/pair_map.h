#pragma once
// A flat, open-addressing map from a pair of integers to a small value, for per-sample and
// per-frame lookups (folding's stacks and frames, the recorder's known stacks): keys sit inline
// in the slot, so a probe touches one cache line and never compares bytes elsewhere, where a
// std::unordered_map lookup chases two or three nodes. `B` is the key's second half (an
// unsigned integer, up to 128 bits); with B = void the key is `a` alone (a 16-byte slot). The
// key whose every part is all ones is reserved (marks an empty slot).

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace gp::util {

template <typename B, typename V>
class PairMap {
  struct NoB {
    bool operator==(const NoB&) const = default;
  };
  using KeyB = std::conditional_t<std::is_void_v<B>, NoB, B>;

 public:
  // `first_slots` (a power of two): the slots its first insert makes room for. Many small maps
  // (one per process) start small; one hot map starts past its first few doublings.
  explicit PairMap(size_t first_slots = 1024) : first_slots_(first_slots) {}

  // The value of (a, b), inserted as `init` when absent; second: whether it was inserted.
  std::pair<V*, bool> try_insert(uint64_t a, KeyB b, V init) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    for (size_t i = hash(a, b) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.a == a && s.b == b) return {&s.value, false};
      if (s.a == kEmpty && s.b == empty_b()) {
        s = {a, b, init};
        ++count_;
        return {&s.value, true};
      }
    }
  }
  std::pair<V*, bool> try_insert(uint64_t a, V init) { return try_insert(a, KeyB{}, init); }

  // The value of (a, b), or nullptr.
  V* find(uint64_t a, KeyB b) {
    if (slots_.empty()) return nullptr;
    for (size_t i = hash(a, b) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.a == a && s.b == b) return &s.value;
      if (s.a == kEmpty && s.b == empty_b()) return nullptr;
    }
  }

  // Empties the map, keeping its slots (a map emptied often refills to about the same size).
  void clear() {
    if (count_ == 0) return;
    std::fill(slots_.begin(), slots_.end(), Slot{});
    count_ = 0;
  }

  // Calls f(a, b, value) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (!(s.a == kEmpty && s.b == empty_b())) f(s.a, s.b, s.value);
  }
  size_t size() const { return count_; }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  static KeyB empty_b() {
    if constexpr (std::is_void_v<B>) return {};
    else return static_cast<KeyB>(~KeyB{});
  }
  struct Slot {
    uint64_t a = kEmpty;
    [[no_unique_address]] KeyB b = empty_b();
    V value{};
  };
  static uint64_t hash(uint64_t a, KeyB b) {
    uint64_t h = a;
    if constexpr (!std::is_void_v<B>) h ^= static_cast<uint64_t>(b) * 0x9e3779b97f4a7c15ull;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? first_slots_ : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    count_ = 0;
    for (const Slot& s : old)
      if (!(s.a == kEmpty && s.b == empty_b())) try_insert(s.a, s.b, s.value);
  }
  size_t first_slots_;
  std::vector<Slot> slots_;
  size_t count_ = 0;
  size_t mask_ = 0;
};

}  // namespace gp::util
