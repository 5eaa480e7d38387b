#pragma once
// The user part of a perf.data sample that carries the user registers and a copy of the user
// stack (`perf record --call-graph dwarf`), walked by gp's own walker (gp/unwind/stack_walker.h,
// the rules of gp-record's BPF walker and of its deferred stack copies) with the unwind tables of
// the binaries the process had mapped at the sample's time (private to libcore/src/import).
// Each region of an address space is given its table the first time a walk meets it; a binary
// with no table (missing, another build, no CFI) is walked with frame-pointer steps and noted.

#include <cstdint>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gp/import/perf_data_header.h"
#include "gp/import/perf_data_records.h"
#include "gp/import/perf_unwind_tables.h"
#include "gp/model/session.h"
#include "gp/unwind/stack_walker.h"
#include "import/perf_data_maps.h"

namespace gp::import {

struct PerfWalk {
  unwind::WalkedStack stack;  // leaf first: the interrupted pc, then return addresses
  model::StackEnd end = model::StackEnd::unknown;
  bool met_missing = false;   // a frame was in a binary without a table
};

class PerfStackUnwinder {
 public:
  // tables: where binaries' tables come from (not owned; nullptr: none, frame pointers only).
  explicit PerfStackUnwinder(PerfUnwindTables* tables) : tables_(tables) {}

  // Whether samples of this event carry what a walk starts from (user registers with ip and sp,
  // and the stack copy).
  static bool wants(const PerfAttr& attr);
  // Walks the sample's user stack in `space` (nullptr: a process with no known mappings). False
  // when this sample has no user registers (a kernel thread, a 32-bit process).
  bool unwind(const PerfAttr& attr, const PerfSample& sample, PerfAddressSpace* space,
              PerfWalk& out);

  // Binaries walks met that had no table, with why: the first kMaxMissing, by first meeting.
  static constexpr size_t kMaxMissing = 32;
  const std::vector<std::pair<std::string, std::string>>& missing() const { return missing_; }
  uint64_t missing_binaries() const { return missing_count_; }

 private:
  class Rules;
  // Looks up the table of a region starting at `start` (once per region).
  void resolve(uint64_t start, PerfRegion& region);

  PerfUnwindTables* tables_;
  std::vector<std::pair<std::string, std::string>> missing_;
  uint64_t missing_count_ = 0;
  std::unordered_set<std::string> missing_seen_;  // binaries already counted (path, build-id)
};

}  // namespace gp::import
