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
  uint64_t sample_period = 0;  // the frequency in Hz when `freq`
  uint64_t sample_type = 0;    // PERF_SAMPLE_* bits
  uint64_t read_format = 0;
  bool freq = false;
  bool sample_id_all = false;
  bool exclude_user = false;
  bool exclude_kernel = false;
  uint64_t branch_sample_type = 0;  // 0 when the attr is too old to have it
  uint64_t sample_regs_user = 0;    // register mask of PERF_SAMPLE_REGS_USER
  uint32_t sample_stack_user = 0;   // bytes of PERF_SAMPLE_STACK_USER asked for
  uint64_t sample_regs_intr = 0;    // register mask of PERF_SAMPLE_REGS_INTR
  std::vector<uint64_t> ids;        // sample ids the kernel gave this event's fds
  std::string name;                 // as perf names it ("cpu-clock:ppp"); empty when unknown
};

// Reads one perf_event_attr of `bytes` (which holds at least its declared size, or 64 bytes for
// a size of 0). False when it is shorter than PERF_ATTR_SIZE_VER0; *size_out is its size.
bool parse_perf_attr(std::span<const uint8_t> bytes, PerfAttr& out, uint32_t* size_out = nullptr);

struct PerfDataHeader {
  bool pipe = false;            // `perf record -o -`: attrs arrive as records, no feature sections
  uint64_t data_offset = 0;     // start of the records
  uint64_t data_size = 0;       // bytes of records (to the end of the input in pipe mode)
  std::vector<PerfAttr> attrs;  // file mode only
  uint64_t features[4] = {};    // HEADER_* feature bitmap (file mode)
  // Where the feature sections' table is (file mode: after the data section as declared); 0
  // when the declared data section runs past the input (an interrupted recording).
  uint64_t feature_table = 0;
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
  // Skips n bytes that follow the last record without being counted in its size (the payload
  // of PERF_RECORD_HEADER_TRACING_DATA and PERF_RECORD_AUXTRACE); false, and truncated, when
  // they run past the end.
  bool skip(uint64_t n);
  uint64_t stop_offset() const { return pos_; }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  uint64_t end_ = 0;
  bool truncated_ = false;
};

}  // namespace gp::import
