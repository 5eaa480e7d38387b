#pragma once
// The address spaces of the processes of a perf.data file, as its MMAP/MMAP2 and FORK records
// build them (private to libcore/src/import). A new mapping replaces what it overlaps, as the
// kernel's mmap does: a region partly covered keeps its uncovered ends. Each region carries the
// archive mapping it became when a sample first hit it (0 until then), so only hit mappings
// reach the archive.

#include <cstdint>
#include <map>
#include <string>

#include "gp/model/session.h"
#include "gp/unwind/table_store.h"

namespace gp::import {

struct PerfRegion {
  uint64_t end = 0;  // exclusive
  uint64_t pgoff = 0;
  std::string path;
  std::string build_id;  // raw; empty when unknown
  uint64_t dev = 0, inode = 0;
  uint64_t mapping_id = 0;  // interned archive mapping, 0 until hit
  // The binary's unwind table (not owned: the importer's PerfUnwindTables keeps it), looked up
  // when a --call-graph dwarf walk first meets the region; table_bias turns an address into the
  // table's offset (unwind::mapping_bias). table_missing: looked up, none to be had.
  const unwind::LoadedBinary* table = nullptr;
  uint64_t table_bias = 0;
  bool table_looked_up = false;
};

class PerfAddressSpace {
 public:
  // Maps [start, start + len), replacing what it overlaps.
  void map(uint64_t start, uint64_t len, PerfRegion region);
  // The region holding addr and its start, or nullptr.
  PerfRegion* find(uint64_t addr, uint64_t& start);
  // A forked process's copy of its parent's regions (not yet hit in the child).
  void copy_from(const PerfAddressSpace& parent);
  // Every region goes (an exec replaced the whole address space).
  void clear() { regions_.clear(); }
  const std::map<uint64_t, PerfRegion>& regions() const { return regions_; }

 private:
  std::map<uint64_t, PerfRegion> regions_;  // by start
};

// The archive mapping of a region of process pid (start as found).
model::Mapping archive_mapping(int32_t pid, uint64_t start, const PerfRegion& r);

}  // namespace gp::import
