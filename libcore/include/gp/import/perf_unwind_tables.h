#pragma once
// Where gp-import's perf.data reader gets the unwind tables of the binaries its processes mapped,
// to unwind `perf record --call-graph dwarf` samples (their user registers and stack copy) with
// gp's own walker (gp/unwind/stack_walker.h), as gp-record unwinds its deferred stack copies.
//
// PerfUnwindTables is what the reader asks, once per binary a walk meets (by recorded path,
// build-id, device and inode); BinaryTables answers from the files of this machine:
//   the binary: each build-id store (perf's build-id cache ~/.debug: .build-id/xx/rest/elf, or a
//     flat .build-id/xx/rest), then the recorded path; a file whose build-id differs from the
//     recorded one is never used (gp/symbolize/debuginfo_finder.h, the binary's lookup order);
//     a recorded [vdso] is this machine's own when its build-id matches;
//   its table: gp-record's table cache (gp/unwind/table_cache.h) by the file's build-id, else
//     compiled from its .eh_frame/.debug_frame and written to the cache.
// A binary that cannot be had (missing, another build, no call-frame information) has no table:
// the walk takes frame-pointer steps there, and the reader counts it. Not thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gp/unwind/table_store.h"

namespace gp::import {

// A mapped binary as perf recorded it.
struct PerfBinaryQuery {
  std::string path;
  std::string build_id;         // raw bytes; empty when perf recorded none
  uint64_t dev = 0, inode = 0;  // (major << 32 | minor) and inode from MMAP2; 0 when unknown
};

struct PerfBinaryTable {
  const unwind::LoadedBinary* binary = nullptr;  // nullptr: no table (why says why)
  // The build-id of the file found, when perf recorded none and the file is the very one that
  // was mapped (same device and inode): the archive's mapping can carry it.
  std::string build_id;
  std::string why;
};

class PerfUnwindTables {
 public:
  virtual ~PerfUnwindTables() = default;
  // The table of a binary; the answer lives as long as this object.
  virtual const PerfBinaryTable& find(const PerfBinaryQuery& binary) = 0;
};

struct BinaryTablesOptions {
  std::vector<std::string> stores;  // build-id stores searched before the recorded path
  std::string cache_dir;            // gp-record's table cache; "" for none
  uint64_t cache_max_bytes = uint64_t{512} << 20;
  std::function<void(const std::string&)> warn;  // the cache's problems (nullptr: dropped)
};

struct BinaryTablesStats {
  uint64_t binaries = 0;    // distinct binaries asked for
  uint64_t built = 0;       // tables compiled from a binary's CFI
  uint64_t cache_hits = 0;  // tables read from the cache
  uint64_t missing = 0;     // binaries without a table
};

class BinaryTables final : public PerfUnwindTables {
 public:
  explicit BinaryTables(BinaryTablesOptions options);
  ~BinaryTables() override;
  BinaryTables(const BinaryTables&) = delete;
  BinaryTables& operator=(const BinaryTables&) = delete;

  const PerfBinaryTable& find(const PerfBinaryQuery& binary) override;
  const BinaryTablesStats& stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gp::import
