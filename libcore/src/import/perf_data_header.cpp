// perf.data header, attrs and record walk (see gp/import/perf_data_header.h).

#include "gp/import/perf_data_header.h"

#include <cstring>

#include "import/perf_bytes.h"

namespace gp::import {
namespace {

constexpr uint64_t kMagic = 0x32454c4946524550ULL;  // "PERFILE2" read as a host-order u64
constexpr uint64_t kMagicSwapped = 0x50455246494c4532ULL;
constexpr size_t kFileHeaderSize = 104;  // magic, size, attr_size, 3 sections, 256-bit features
constexpr size_t kPipeHeaderSize = 16;   // magic, size
constexpr size_t kAttrMinSize = 64;      // PERF_ATTR_SIZE_VER0
constexpr size_t kSectionSize = 16;      // perf_file_section: offset, size
constexpr uint64_t kSampleIdAllBit = 1ULL << 18;
constexpr uint64_t kExcludeUserBit = 1ULL << 4;
constexpr uint64_t kExcludeKernelBit = 1ULL << 5;
constexpr uint64_t kFreqBit = 1ULL << 10;

bool inside(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

}  // namespace

bool parse_perf_attr(std::span<const uint8_t> a, PerfAttr& attr, uint32_t* size_out) {
  if (a.size() < kAttrMinSize) return false;
  uint32_t declared = load_at<uint32_t>(a, 4);
  uint32_t size = declared == 0 ? kAttrMinSize : declared;
  if (size < kAttrMinSize || size > a.size()) return false;
  if (size_out) *size_out = size;
  attr.type = load_at<uint32_t>(a, 0);
  attr.config = load_at<uint64_t>(a, 8);
  attr.sample_period = load_at<uint64_t>(a, 16);
  attr.sample_type = load_at<uint64_t>(a, 24);
  attr.read_format = load_at<uint64_t>(a, 32);
  uint64_t flags = load_at<uint64_t>(a, 40);
  attr.freq = flags & kFreqBit;
  attr.sample_id_all = flags & kSampleIdAllBit;
  attr.exclude_user = flags & kExcludeUserBit;
  attr.exclude_kernel = flags & kExcludeKernelBit;
  // Fields of later attr versions (PERF_ATTR_SIZE_VER2 = 80, VER3 = 96, VER4 = 104).
  if (size >= 80) attr.branch_sample_type = load_at<uint64_t>(a, 72);
  if (size >= 96) {
    attr.sample_regs_user = load_at<uint64_t>(a, 80);
    attr.sample_stack_user = load_at<uint32_t>(a, 88);
  }
  if (size >= 104) attr.sample_regs_intr = load_at<uint64_t>(a, 96);
  return true;
}

bool read_perf_data_header(std::span<const uint8_t> bytes, PerfDataHeader& out,
                           std::string& error) {
  out = PerfDataHeader{};
  if (bytes.size() < 8) {
    error = "not a perf.data file: shorter than its magic";
    return false;
  }
  uint64_t magic = load_at<uint64_t>(bytes, 0);
  if (magic == kMagicSwapped) {
    error = "perf.data written on the other byte order is not supported";
    return false;
  }
  if (magic != kMagic) {
    error = "not a perf.data file: wrong magic";
    return false;
  }
  if (bytes.size() < kPipeHeaderSize) {
    error = "perf.data truncated inside its header";
    return false;
  }
  uint64_t header_size = load_at<uint64_t>(bytes, 8);
  if (header_size == kPipeHeaderSize) {
    out.pipe = true;
    out.data_offset = kPipeHeaderSize;
    out.data_size = bytes.size() - kPipeHeaderSize;
    return true;
  }
  if (header_size < kFileHeaderSize || bytes.size() < kFileHeaderSize) {
    error = "perf.data truncated inside its header";
    return false;
  }
  uint64_t attr_size = load_at<uint64_t>(bytes, 16);
  uint64_t attrs_offset = load_at<uint64_t>(bytes, 24), attrs_size = load_at<uint64_t>(bytes, 32);
  out.data_offset = load_at<uint64_t>(bytes, 40);
  out.data_size = load_at<uint64_t>(bytes, 48);
  for (int i = 0; i < 4; ++i) out.features[i] = load_at<uint64_t>(bytes, 72 + 8 * i);

  if (attr_size < kAttrMinSize + kSectionSize) {
    error = "perf.data declares an attribute size of " + std::to_string(attr_size) + " bytes";
    return false;
  }
  if (!inside(attrs_offset, attrs_size, bytes.size())) {
    error = "perf.data attribute section lies outside the file";
    return false;
  }
  if (!inside(out.data_offset, 0, bytes.size())) {
    error = "perf.data data section starts outside the file";
    return false;
  }
  // A data size beyond the file is what an interrupted `perf record` leaves: the records that
  // fit are read and the walk reports truncation.
  if (!inside(out.data_offset, out.data_size, bytes.size()))
    out.data_size = bytes.size() - out.data_offset;

  uint64_t declared_data_size = load_at<uint64_t>(bytes, 48);
  if (inside(out.data_offset, declared_data_size, bytes.size()))
    out.feature_table = out.data_offset + declared_data_size;

  // Each entry is a perf_event_attr of attr_size - 16 bytes, then the section of its ids.
  uint64_t count = attrs_size / attr_size;
  out.attrs.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    auto a = bytes.subspan(attrs_offset + i * attr_size, attr_size);
    PerfAttr attr;
    if (!parse_perf_attr(a.first(attr_size - kSectionSize), attr)) {
      error = "perf.data attribute " + std::to_string(i) + " declares " +
              std::to_string(load_at<uint32_t>(a, 4)) + " bytes";
      return false;
    }
    uint64_t ids_offset = load_at<uint64_t>(a, attr_size - kSectionSize);
    uint64_t ids_size = load_at<uint64_t>(a, attr_size - kSectionSize + 8);
    if (inside(ids_offset, ids_size, bytes.size())) {
      for (uint64_t k = 0; k + 8 <= ids_size; k += 8) attr.ids.push_back(load_at<uint64_t>(bytes, ids_offset + k));
    }
    out.attrs.push_back(std::move(attr));
  }
  return true;
}

PerfRecordCursor::PerfRecordCursor(std::span<const uint8_t> bytes, uint64_t begin, uint64_t size)
    : bytes_(bytes) {
  pos_ = begin <= bytes.size() ? begin : bytes.size();
  end_ = inside(pos_, size, bytes.size()) ? pos_ + size : bytes.size();
}

bool PerfRecordCursor::next(PerfRecord& out) {
  if (truncated_ || pos_ >= end_) return false;
  constexpr uint64_t kRecordHeader = 8;
  if (end_ - pos_ < kRecordHeader) {
    truncated_ = true;
    return false;
  }
  uint16_t size = load_at<uint16_t>(bytes_, pos_ + 6);
  if (size < kRecordHeader || size > end_ - pos_) {
    truncated_ = true;
    return false;
  }
  out.type = load_at<uint32_t>(bytes_, pos_);
  out.misc = load_at<uint16_t>(bytes_, pos_ + 4);
  out.body = bytes_.subspan(pos_ + kRecordHeader, size - kRecordHeader);
  out.offset = pos_;
  pos_ += size;
  return true;
}

bool PerfRecordCursor::skip(uint64_t n) {
  if (n > end_ - pos_) {
    truncated_ = true;
    return false;
  }
  pos_ += n;
  return true;
}

}  // namespace gp::import
