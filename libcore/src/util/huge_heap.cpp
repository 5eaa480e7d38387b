#include "gp/util/huge_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace gp::util {
namespace {

// Address space reserved at the heap's next growth; untouched parts cost no memory.
constexpr size_t kReserve = size_t{1} << 30;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr int kDefaultTopPad = 128 << 10;  // glibc's M_TOP_PAD default

// A process under an address-space or data limit keeps the usual heap: the reservation would
// count against the limit from the start.
bool unlimited(int resource) {
  rlimit lim{};
  return ::getrlimit(resource, &lim) == 0 && lim.rlim_cur == RLIM_INFINITY;
}

}  // namespace

void use_huge_pages_for_heap() {
  if (!unlimited(RLIMIT_AS) || !unlimited(RLIMIT_DATA)) return;
  // Blocks up to glibc's largest threshold (32 MiB) come from the heap rather than from mmap,
  // which gives each its own mapping of small pages and unmaps it on free.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, INT32_MAX);
  // Worker threads (gp-symbolize's) allocate from this heap too, not from arenas of their own
  // that are mapped with small pages and unmapped (a TLB flush on every CPU) as they shrink.
  ::mallopt(M_ARENA_MAX, 1);
  ::mallopt(M_TOP_PAD, static_cast<int>(kReserve));
  auto* before = static_cast<char*>(::sbrk(0));
  // A block the current top cannot hold makes glibc grow the heap by it plus the pad (volatile:
  // the compiler drops a malloc whose block is only freed).
  void* volatile block = std::malloc(256 << 10);
  auto* after = static_cast<char*>(::sbrk(0));
  std::free(block);
  // The pad stays: with glibc's default, a later free trimmed the heap back to what was used,
  // and the part grown again after that had no huge pages.
  if (block == nullptr || before == reinterpret_cast<char*>(-1) || after <= before) {
    ::mallopt(M_TOP_PAD, kDefaultTopPad);  // no reservation: the usual heap
    return;
  }
  auto start = (reinterpret_cast<uintptr_t>(before) + kHugePage - 1) & ~(kHugePage - 1);
  auto end = reinterpret_cast<uintptr_t>(after) & ~(kHugePage - 1);
  if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
}

}  // namespace gp::util
