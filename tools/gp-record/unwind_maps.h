#pragma once
// The BPF sampler's unwind tables (--unwind dwarf|auto): libcore's TableStore and ProcessTables
// over the BPF program's maps. The three arrays are written through mmap (a table costs no
// system call per row); a process's entry is one map update, written when its mappings are read
// (first sample, follow-ups, dlopen) and removed when it execs, exits or is forgotten.

#include <bpf/libbpf.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <memory>
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
  // The maps of a loaded program: the arrays (mapped into memory) and the per-process hash.
  struct Maps {
    bpf_map* rows;
    bpf_map* pages;
    bpf_map* tables;
    bpf_map* mappings;
    bpf_map* procs;
  };
  static Result<std::unique_ptr<BpfUnwinder>> open(const Maps& maps, unwind::StoreLimits limits);
  ~BpfUnwinder() override;

  void on_mappings(int32_t pid, const std::vector<model::Mapping>& mappings) override;
  void forget(int32_t pid) override;
  std::vector<model::Counter> counters() const override;
  std::vector<std::string> take_failures() override { return tables_.take_failures(); }

 private:
  BpfUnwinder(unwind::StoreLimits limits, int procs_fd);
  void write_rows(uint32_t at, std::span<const unwind::PackedRow> rows) override;
  void write_pages(uint32_t at, std::span<const unwind::PackedPage> pages) override;
  void write_slot(uint32_t slot, const unwind::TableSlot& where) override;

  struct Mapped {
    void* addr = nullptr;
    size_t size = 0;
  };
  // A process's range of unwind_mappings.
  struct Range {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  void release(const Range& r);
  // Ranges a process no longer names go back for reuse only after kQuarantine: a BPF program
  // that looked the process up just before may still read them (for microseconds).
  void reuse_released();

  Mapped rows_, pages_, slots_, mappings_;
  int procs_fd_ = -1;
  unwind::Ranges mapping_ranges_{kUnwindMappings};
  std::unordered_map<int32_t, Range> ranges_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, Range>> released_;
  uint64_t no_room_ = 0;
  unwind::TableStore store_;
  unwind::ProcessTables tables_;
  uint64_t entries_written_ = 0;
};

}  // namespace gp::record_tool
