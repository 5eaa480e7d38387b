#pragma once
// The BPF sampler's unwind tables (--unwind dwarf|auto): libcore's TableStore and ProcessTables
// over the BPF program's maps. Rows, pages and table slots are written with one batch update per
// table; a process's mapped tables are a range of a shared array, named by its entry in a small
// hash, written when its mappings are read (first sample, follow-ups, dlopen) and removed when it
// execs, exits or is forgotten.
//
// Loading waits its turn: a read of a process's mappings queues its tables, and the recorder
// loads the queue one process at a time between polls, so building a large binary's table never
// delays the snapshot of a process that was announced meanwhile (a process that lives 50 ms).

#include <bpf/libbpf.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"
#include "gp/unwind/process_tables.h"
#include "gp/unwind/ranges.h"
#include "gp/unwind/table_store.h"
#include "gp/util/result.h"
#include "sampler.h"

namespace gp::record_tool {

// Array sizes for --unwind-memory MiB: 7/8 of it rows, 1/8 pages (8 bytes each).
unwind::StoreLimits unwind_limits(uint32_t memory_mib);
inline constexpr uint32_t kUnwindTableSlots = 8192;
inline constexpr uint32_t kUnwindProcesses = 16384;
inline constexpr uint32_t kUnwindMappings = 65536;  // every process's mapped tables: 2 MiB

class BpfUnwinder final : public Unwinder, private unwind::TableMemory {
 public:
  // The maps of a loaded program.
  struct Maps {
    bpf_map* rows;
    bpf_map* pages;
    bpf_map* tables;
    bpf_map* mappings;
    bpf_map* procs;
  };
  BpfUnwinder(const Maps& maps, unwind::StoreLimits limits);

  void on_mappings(int32_t pid, const std::vector<model::Mapping>& mappings) override;
  bool has_pending() const override { return !pending_order_.empty(); }
  void load_next() override;
  void forget(int32_t pid) override;
  std::vector<model::Counter> counters() const override;
  std::vector<std::string> take_failures() override { return tables_.take_failures(); }

 private:
  void load(int32_t pid, const std::vector<model::Mapping>& mappings);
  void write_rows(uint32_t at, std::span<const unwind::PackedRow> rows) override;
  void write_pages(uint32_t at, std::span<const unwind::PackedPage> pages) override;
  void write_slot(uint32_t slot, const unwind::TableSlot& where) override;
  // Writes n elements of an array map from `at` with one batch update.
  void write_array(int fd, uint32_t at, const void* values, size_t n);

  // A process's range of unwind_mappings.
  struct Range {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  void release(const Range& r);
  // Ranges a process no longer names go back for reuse only after kQuarantine: a BPF program
  // that looked the process up just before may still read them (for microseconds).
  void reuse_released();

  int rows_fd_, pages_fd_, slots_fd_, mappings_fd_, procs_fd_;
  std::vector<uint32_t> keys_;  // the batch updates' keys
  unwind::Ranges mapping_ranges_{kUnwindMappings};
  std::unordered_map<int32_t, Range> ranges_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, Range>> released_;
  // Mappings read but not loaded yet, by pid (the latest read), in the order they came.
  std::unordered_map<int32_t, std::vector<model::Mapping>> pending_;
  std::deque<int32_t> pending_order_;
  uint64_t no_room_ = 0;
  unwind::TableStore store_;
  unwind::ProcessTables tables_;
  uint64_t entries_written_ = 0;
};

}  // namespace gp::record_tool
