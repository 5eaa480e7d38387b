#pragma once
// TableStore: where unwind tables live in the fixed-size arrays the BPF unwinder reads (rows,
// pages, and one slot per table saying where its rows and pages are). Tables are shared: one per
// key (a binary's build-id), with a count of the processes that use it. A table no process uses
// stays loaded (the next process that maps the binary costs nothing) until its room is needed:
// unused tables are evicted, least recently used first, and the arrays are never overrun.
// Not thread-safe.

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gp/unwind/ranges.h"
#include "gp/unwind/table.h"
#include "gp/util/result.h"

namespace gp::unwind {

// Where a table's rows and pages are (bpf/profile.h: struct gp_unwind_table).
struct TableSlot {
  uint32_t row_base = 0;
  uint32_t row_count = 0;
  uint32_t page_base = 0;
  uint32_t page_count = 0;
};
static_assert(sizeof(TableSlot) == 16);

// The arrays' storage: the BPF maps in gp-record, vectors in tests. A slot is written after its
// rules, rows and pages, so a reader that finds a slot finds its table whole. Rules are one array
// shared by every table (each distinct rule once, never removed); the rows written name them by
// their index there.
class TableMemory {
 public:
  virtual ~TableMemory() = default;
  // Each false when the storage could not be written (the load then fails).
  virtual bool write_rules(uint32_t at, std::span<const PackedRule> rules) = 0;
  virtual bool write_rows(uint32_t at, std::span<const PackedRow> rows) = 0;
  virtual bool write_pages(uint32_t at, std::span<const PackedPage> pages) = 0;
  virtual bool write_slot(uint32_t slot, const TableSlot& where) = 0;
};

// A loadable segment of an ELF file (PT_LOAD): how its file offsets map to virtual addresses.
struct Segment {
  uint64_t offset = 0;  // p_offset
  uint64_t vaddr = 0;   // p_vaddr
  uint64_t filesz = 0;  // p_filesz
};

// A binary ready for the store: its packed table and its PT_LOAD segments.
struct LoadedBinary {
  PackedTable table;
  std::vector<Segment> segments;
};

// What a loaded table's users need besides its slot: where its addresses start and how the
// binary's file offsets map to them.
struct TableInfo {
  uint64_t base = 0;  // PackedTable::base
  std::vector<Segment> segments;
};

// Capacities of the arrays.
struct StoreLimits {
  uint32_t rows = 0;
  uint32_t pages = 0;
  uint32_t slots = 0;
  uint32_t rules = kMaxPackedRules;
};

struct StoreStats {
  uint64_t loaded = 0;   // tables built and written (a table evicted and loaded again counts twice)
  uint64_t evicted = 0;  // unused tables dropped for room
  uint64_t failed = 0;   // keys whose table could not be built (no CFI, unreadable, corrupt)
  uint64_t no_room = 0;  // tables that did not fit even with every unused table evicted
  uint64_t rows_used = 0;  // rows and pages of the tables loaded now
  uint64_t pages_used = 0;
  uint64_t tables = 0;  // tables loaded now (used or not)
  uint64_t rules = 0;   // distinct rules in the shared array
};

class TableStore {
 public:
  TableStore(TableMemory& memory, StoreLimits limits) : memory_(memory), limits_(limits) {}

  using Builder = std::function<Result<LoadedBinary>()>;
  struct Acquired {
    uint32_t slot;
    const TableInfo* info;  // valid until the slot is released
  };
  // The slot of the table under `key`, with one more user. A key not loaded is built with
  // `build` (once: a failure is remembered and returned again without building). Error when the
  // build fails or the table does not fit.
  Result<Acquired> acquire(const std::string& key, const Builder& build);
  // One user fewer for the table in `slot`.
  void release(uint32_t slot);
  // Forgets that `key`'s build failed: the failure was not the binary's (its process exited
  // before the file could be opened), and the next process that maps it tries again.
  void forget_failure(const std::string& key) { failed_.erase(key); }

  const StoreStats& stats() const { return stats_; }
  // Keys whose build failed are remembered up to this many (then forgotten all at once).
  static constexpr size_t kMaxFailedKeys = 4096;

 private:
  struct Entry {
    std::string key;
    TableSlot where;
    TableInfo info;
    uint32_t users = 0;
    std::list<uint32_t>::iterator lru;  // in unused_ while users == 0
  };
  Result<Acquired> load(const std::string& key, LoadedBinary&& binary);
  // The table's rows with their rules' indices in the shared array (new rules written there),
  // in shared_rows_; an error when the shared array is full or cannot be written.
  Status to_shared_rules(const PackedTable& table);
  bool evict_one();
  void drop(uint32_t slot);

  TableMemory& memory_;
  StoreLimits limits_;
  Ranges rows_{limits_.rows}, pages_{limits_.pages};
  std::unordered_map<std::string, uint32_t> by_key_;
  std::unordered_map<uint32_t, Entry> slots_;
  std::vector<uint32_t> free_slots_;
  uint32_t next_slot_ = 0;
  std::list<uint32_t> unused_;  // slots without users, least recently used first
  std::unordered_map<std::string, std::string> failed_;  // key -> the build's error
  std::unordered_map<uint32_t, uint32_t> shared_rules_;  // a rule's bits -> its index
  std::vector<uint16_t> local_to_shared_;
  std::vector<PackedRow> shared_rows_;  // the table being loaded, its rules' shared indices
  StoreStats stats_;
};

}  // namespace gp::unwind
