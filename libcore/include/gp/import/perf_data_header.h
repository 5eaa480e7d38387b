#pragma once
// The frame of a perf.data file, read from perf's documented layout
// (tools/perf/Documentation/perf.data-file-format.txt): the file header or the pipe-mode
// header, the event attributes, and a bounded walk over the records of the data section.
// Only the host byte order is read; a file written on the other byte order is refused by name.
// Nothing here allocates per record: a record is a view into the caller's bytes.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gp::import {

// (Detecting a perf.data by its magic: looks_like_perf_data in gp/import/perf_script.h.)

struct PerfAttr {
  uint32_t type = 0;  // PERF_TYPE_*
  uint64_t config = 0;
  uint64_t sample_type = 0;  // PERF_SAMPLE_* bits
  uint64_t read_format = 0;
  bool sample_id_all = false;
  bool exclude_user = false;
  bool exclude_kernel = false;
};

struct PerfDataHeader {
  bool pipe = false;            // `perf record -o -`: attrs arrive as records, no feature sections
  uint64_t data_offset = 0;     // start of the records
  uint64_t data_size = 0;       // bytes of records (to the end of the input in pipe mode)
  std::vector<PerfAttr> attrs;  // file mode only
  uint64_t features[4] = {};    // HEADER_* feature bitmap (file mode)
  bool has_feature(unsigned bit) const {
    return bit < 256 && ((features[bit / 64] >> (bit % 64)) & 1);
  }
};

// Reads the header of `bytes` (the whole file, or at least its header, attrs and data section).
// False with a one-line reason in `error` on a wrong magic, the other byte order, or sections
// that lie outside the input.
bool read_perf_data_header(std::span<const uint8_t> bytes, PerfDataHeader& out, std::string& error);

struct PerfRecord {
  uint32_t type = 0;  // PERF_RECORD_*
  uint16_t misc = 0;
  std::span<const uint8_t> body;  // the record after its 8-byte header
  uint64_t offset = 0;            // of the record in the input
};

// Walks the records of [begin, end) of `bytes`. next() is false at the end; truncated() tells
// whether the walk stopped early on a record that does not fit (the records before it are good).
class PerfRecordCursor {
 public:
  PerfRecordCursor(std::span<const uint8_t> bytes, uint64_t begin, uint64_t size);
  bool next(PerfRecord& out);
  bool truncated() const { return truncated_; }
  uint64_t stop_offset() const { return pos_; }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  uint64_t end_ = 0;
  bool truncated_ = false;
};

}  // namespace gp::import
