#pragma once
// Transparent huge pages for a batch tool's heap.
//
// gp-import, gp-symbolize and gp-fold (and gp-merge, gp-flame) build tables of hundreds of thousands of small entries
// (locations, stacks, samples, interning slots) and walk them in no useful order: with 4 KiB
// pages most of their time went to page faults and TLB misses (measured on the import bench:
// gp-fold 0.52 -> 0.17 CPU-s with glibc's own hugetlb tunable). This asks glibc to take the
// main heap in one large reservation (address space only: pages are still faulted in on first
// touch) and advises the kernel to back it with huge pages where its THP mode is "madvise".
// Memory is not given back to the kernel before exit, and threads share the one heap, which
// suits tools that run once over one input; a long-running recorder must not call it.
//
// Call once, first thing in main (before threads start). Without THP, or when the reservation
// cannot be made (a data rlimit, strict overcommit), the heap stays as it was.

namespace gp::util {

void use_huge_pages_for_heap();

}  // namespace gp::util
