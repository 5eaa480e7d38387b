#pragma once
// gp-import's native reader of perf.data: a whole file (or a pipe-mode stream, `perf record -o
// -`) in memory → a model::Session that keeps addresses, as gp-record's archives do, so that
// gp-symbolize names the frames anywhere from the build-ids:
//   processes (pid, ppid, comm over time) and threads from COMM/FORK records;
//   per process, the mappings its samples hit (start, end, file offset, path, dev/inode, and
//     the build-id from MMAP2 or from the build-id feature section / HEADER_BUILD_ID records);
//   kernel frames on gp-record's "[kernel.kallsyms]" mapping (pid 0, the whole address space)
//     with the kernel's build-id;
//   one sample per perf sample of the selected event: count 1, weight = its period, comm = the
//     process's name at that time; stacks leaf first from the callchain (kernel part, then user
//     part; the first frame of each part is the interrupted instruction, the others return
//     addresses), or the sampled ip alone without a callchain;
//   a sample with the user registers and a copy of the user stack (`perf record --call-graph
//     dwarf`) gets its user part from gp's own walker (gp/unwind/stack_walker.h) with the tables
//     of PerfDataOptions::unwind_tables, and the stack's end as the walk found it (complete, or
//     truncated when it could not reach the outermost frame), as gp-record's stack copies do.
// An exec (COMM with its exec flag) empties the process's address space: the new image's
// mappings follow it.
// Records are processed in time order within each FINISHED_ROUND, as perf does.
// Bounded and salvaging: a record that does not decode is skipped and counted; a file cut
// inside a record keeps every record before the cut. Memory: the input plus what is interned
// (distinct frames and stacks) plus one round's record list.
//
// Not thread-safe; one importer per session.

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gp/import/perf_unwind_tables.h"
#include "gp/model/session.h"

namespace gp::import {

struct PerfDataOptions {
  // As PerfScriptOptions::event: the event to import (its name, or its name before perf's
  // ':' modifiers); empty = the first event that has samples, others counted.
  std::string event;
  // Called whenever the session holds this many samples: the caller writes a chunk (and clears
  // session.samples), then calls forget_samples(). False from it stops the import.
  size_t chunk_samples = 200'000;
  std::function<bool()> on_chunk;
  // Told now and then (every few thousand records) how far the reading is: the offset of the
  // record being read and the input's size, for a progress line.
  std::function<void(uint64_t offset, uint64_t size)> on_progress;
  // Unwind tables for --call-graph dwarf samples (not owned; must outlive the import). nullptr:
  // their copies are walked with frame pointers only.
  PerfUnwindTables* unwind_tables = nullptr;
};

struct PerfDataStats {
  uint64_t records = 0;
  uint64_t samples = 0;  // imported (of the selected event)
  uint64_t frames = 0;
  uint64_t lost_events = 0;   // LOST records' counts (the kernel's ring buffer was full)
  uint64_t bad_records = 0;   // records skipped because they did not decode
  std::string first_problem;  // why the first of them was skipped, with its offset
  bool truncated = false;     // the input ends inside a record, or before its declared end
  uint64_t truncated_at = 0;  // offset where the records that were kept end
  bool pipe = false;
  std::string event;  // the selected event's name
  std::vector<std::pair<std::string, uint64_t>> other_events;  // samples not selected
  uint64_t bad_feature_sections = 0;
  // Samples (of the selected event) whose user stack was walked from their registers and stack
  // copy, and how the walks ended.
  uint64_t walked = 0;
  uint64_t walked_complete = 0;
  uint64_t walked_truncated = 0;
  uint64_t walked_without_table = 0;  // walks that met a binary without a table
  uint64_t missing_binaries = 0;      // distinct binaries without a table
  std::vector<std::pair<std::string, std::string>> missing;  // the first of them: path, why
};

class PerfDataImporter {
 public:
  PerfDataImporter(model::Session& session, PerfDataOptions options = {});
  ~PerfDataImporter();
  PerfDataImporter(const PerfDataImporter&) = delete;
  PerfDataImporter& operator=(const PerfDataImporter&) = delete;

  // Imports `bytes` (the whole file or stream). False with a one-line reason when nothing can
  // be read at all (not perf.data, another byte order, compressed records, a header that lies
  // outside the input); otherwise true, with what was salvaged in stats().
  bool import(std::span<const uint8_t> bytes, std::string& error);
  const PerfDataStats& stats() const;
  // Distinct kernel addresses of the imported samples (for a kallsyms subset).
  const std::set<uint64_t>& kernel_addresses() const;
  // The kernel's build-id as perf recorded it (raw bytes), empty when absent.
  const std::string& kernel_build_id() const;
  // The recording's os release (HEADER_OSRELEASE), empty when absent.
  const std::string& os_release() const;
  void forget_samples();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gp::import
