#pragma once
// A small direct-mapped cache of recently seen frame lines (pid, text) -> frame entry index, in
// front of the importer's big frame table. perf script repeats the same frames sample after
// sample (kernel entry paths, a hot loop's callers); the big table holds every distinct frame of
// the recording (hundreds of thousands), so a lookup there misses the CPU caches and the TLB
// twice: once for its slot, once for the key bytes. Here the text is stored inline in a 128-byte
// entry, and the whole cache (256 kB) stays in L2. On a 204k-sample system-wide recording it
// answers about half of the frame lines. An all-zero slot is empty, so the cache is allocated
// zeroed by calloc: a parser that reads a few lines (a short file, a fuzz input) faults in the
// pages it uses instead of clearing 256 kB.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>

namespace gp::import {

class RecentFrames {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  RecentFrames() : memory_(std::calloc(kSlots + 1, sizeof(Slot))) {
    if (!memory_) throw std::bad_alloc();
    // One spare slot lets the array start on a 64-byte boundary (calloc aligns to 16).
    auto at =
        (reinterpret_cast<uintptr_t>(memory_.get()) + alignof(Slot) - 1) & ~(alignof(Slot) - 1);
    slots_ = reinterpret_cast<Slot*>(at);
  }

  // The entry cached for (pid, text) with hash h, or kNone.
  uint32_t find(uint64_t h, int32_t pid, std::string_view text) const {
    const Slot& s = slots_[h & (kSlots - 1)];
    if (s.hash != h || s.pid != pid || s.len != text.size() || s.entry_plus1 == 0) return kNone;
    return std::memcmp(s.text, text.data(), text.size()) == 0 ? s.entry_plus1 - 1 : kNone;
  }
  // The entry that (pid, text) with hash h probably has here (its text not compared), or kNone;
  // for prefetching only.
  uint32_t guess(uint64_t h, int32_t pid, size_t size) const {
    const Slot& s = slots_[h & (kSlots - 1)];
    return s.hash == h && s.pid == pid && s.len == size && s.entry_plus1 ? s.entry_plus1 - 1
                                                                         : kNone;
  }
  // Remembers (pid, text) -> entry, replacing what shared its slot. Long lines are not cached.
  void put(uint64_t h, int32_t pid, std::string_view text, uint32_t entry) {
    if (text.size() > kTextBytes || entry == kNone) return;
    Slot& s = slots_[h & (kSlots - 1)];
    s.hash = h;
    s.pid = pid;
    s.len = static_cast<uint16_t>(text.size());
    s.entry_plus1 = entry + 1;
    std::memcpy(s.text, text.data(), text.size());
  }

 private:
  static constexpr size_t kSlots = 2048;
  static constexpr size_t kTextBytes = 106;  // a slot is 128 bytes, two cache lines
  struct alignas(64) Slot {                  // all zero: empty
    uint64_t hash;
    int32_t pid;
    uint32_t entry_plus1;  // the entry + 1; 0 when the slot is empty
    uint16_t len;
    char text[kTextBytes];
  };
  static_assert(sizeof(Slot) == 128);
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> memory_;
  Slot* slots_ = nullptr;
};

}  // namespace gp::import
