#pragma once
// A flat, open-addressing hash table from byte strings to small values,
// for interning on hot paths: the importer's tables (one lookup per perf script line), the
// SessionBuilder's tables and gp-fold's aggregation. Keys live in blocks that start at 4 KiB and
// double up to 1 MiB (a table of a few keys, as in a small .col file, does not map and fault in
// a whole MiB; a large one still allocates once per MiB of keys), so an entry
// costs no allocation of its own, the table is freed in a few blocks, and growing never copies
// the keys — std::unordered_map<std::string> spent a third of gp-import's time in node
// allocation, pointer chasing and teardown. Lookups take a string_view: callers build keys in a
// reused buffer, never a new std::string. Tables of hundreds of thousands of keys outgrow the CPU
// caches: a caller that knows a hash early can prefetch() its slot and later its key bytes.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gp::model {

// Fast 64-bit hash of bytes (multiply–xorshift over 8-byte words); not for untrusted-DoS use.
inline uint64_t hash_bytes(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  if (n > 0) std::memcpy(&w, p, n);  // p may be null for an empty key
  h = (h ^ w) * 0x94d049bb133111ebull;
  return h ^ (h >> 29);
}

template <typename V>
class StringTable {
 public:
  // The value for key, or nullptr.
  V* find(std::string_view key) { return find(key, hash_bytes(key)); }
  // The same for a key whose hash_bytes() is h.
  V* find(std::string_view key, uint64_t h) {
    if (slots_.empty()) return nullptr;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.len == kEmpty) return nullptr;
      if (s.hash == static_cast<uint32_t>(h) && s.len == key.size() &&
          (key.empty() || std::memcmp(s.key, key.data(), key.size()) == 0))
        return &s.value;
    }
  }
  // Inserts key (which must be absent) and returns its value slot.
  V& insert(std::string_view key, V value) {
    return insert(key, hash_bytes(key), std::move(value));
  }
  V& insert(std::string_view key, uint64_t h, V value) {
    if ((count_ + 1) * 4 > slots_.size() * 3) grow();
    ++count_;
    Slot& s = place(h);
    s.key = store(key);
    s.len = static_cast<uint32_t>(key.size());
    s.value = std::move(value);
    return s.value;
  }
  // The value for key, inserting `value` first when absent; second: whether it was inserted.
  std::pair<V*, bool> try_insert(std::string_view key, V value) {
    return try_insert(key, hash_bytes(key), std::move(value));
  }
  // The same for a key whose hash_bytes() is h.
  std::pair<V*, bool> try_insert(std::string_view key, uint64_t h, V value) {
    if (V* v = find(key, h)) return {v, false};
    return {&insert(key, h, std::move(value)), true};
  }
  // Starts loading the slot where a lookup of hash h begins.
  void prefetch(uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_]);
  }
  // Starts loading the key bytes of the slot where a lookup of h begins, when that slot holds
  // hash h (call some time after prefetch(h), when the slot is likely cached).
  void prefetch_key(uint64_t h) const {
    if (slots_.empty()) return;
    const Slot& s = slots_[h & mask_];
    if (s.hash == static_cast<uint32_t>(h) && s.len != kEmpty) __builtin_prefetch(s.key);
  }
  // Empties the table. The block new keys went to, and a slot array of up to kKeptSlots, stay
  // allocated: a table emptied every chunk or drain (a sample index) would otherwise map, fault
  // in and unmap a fresh 1 MiB block each time.
  void clear() {
    std::unique_ptr<char[]> current;
    for (auto& b : blocks_)
      if (b.get() == block_) current = std::move(b);
    blocks_.clear();
    if (current) {
      blocks_.push_back(std::move(current));
      used_ = 0;
    } else {
      block_ = nullptr;
      block_bytes_ = 0;
      used_ = 0;
    }
    if (slots_.size() <= kKeptSlots) {
      std::fill(slots_.begin(), slots_.end(), Slot{});
    } else {
      std::vector<Slot>().swap(slots_);
      mask_ = 0;
    }
    count_ = 0;
  }
  size_t size() const { return count_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static constexpr size_t kFirstBlockBytes = 4096;
  static constexpr size_t kBlockBytes = 1 << 20;
  static constexpr size_t kKeptSlots = 4096;
  static constexpr size_t kFirstSlots = 16;  // a table of a few keys zeroes 512 bytes, not 32 KiB
  // The low 32 bits of the key's hash are kept: they place the slot (tables have fewer than 2^32
  // slots) and reject most unequal keys without reading them. A 64-bit value makes a 24-byte slot,
  // not 32: the SessionBuilder's tables of hundreds of thousands of keys touch a quarter less
  // memory, the first touch of which is most of their cost.
  struct Slot {
    const char* key = nullptr;
    uint32_t hash = 0;
    uint32_t len = kEmpty;
    V value{};
  };
  // A copy of key in the current block, or in a new one when it does not fit there; a long key
  // gets a block of its own and the current block stays.
  const char* store(std::string_view key) {
    if (key.empty()) return nullptr;
    if (key.size() > kBlockBytes / 4) {
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(key.size()));
      std::memcpy(blocks_.back().get(), key.data(), key.size());
      return blocks_.back().get();
    }
    if (key.size() > block_bytes_ - used_) {
      // Each new block is twice the last, up to kBlockBytes, and large enough for the key.
      size_t bytes = block_ ? std::min(block_bytes_ * 2, kBlockBytes) : kFirstBlockBytes;
      while (bytes < key.size()) bytes *= 2;
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(bytes));
      block_ = blocks_.back().get();
      block_bytes_ = bytes;
      used_ = 0;
    }
    char* at = block_ + used_;
    std::memcpy(at, key.data(), key.size());
    used_ += key.size();
    return at;
  }
  Slot& place(uint64_t h) {
    size_t i = h & mask_;
    while (slots_[i].len != kEmpty) i = (i + 1) & mask_;
    slots_[i].hash = static_cast<uint32_t>(h);
    return slots_[i];
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? kFirstSlots : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (Slot& o : old) {
      if (o.len == kEmpty) continue;
      Slot& s = place(o.hash);
      s.key = o.key;
      s.len = o.len;
      s.value = std::move(o.value);
    }
  }
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* block_ = nullptr;   // the block new keys go to
  size_t block_bytes_ = 0;  // its size
  size_t used_ = 0;         // bytes used in block_
  size_t count_ = 0;
  size_t mask_ = 0;
};

}  // namespace gp::model
