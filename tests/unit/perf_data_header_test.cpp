// perf.data header and record walk on synthetic files built from the documented layout.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gp/import/perf_data_header.h"

namespace gp::test::import {
namespace {

using gp::import::PerfDataHeader;
using gp::import::PerfRecord;
using gp::import::PerfRecordCursor;
using gp::import::read_perf_data_header;

constexpr uint64_t kMagic = 0x32454c4946524550ULL;
constexpr uint64_t kAttrSize = 136;  // perf_event_attr (120 bytes, VER5) + ids section

struct Bytes {
  std::vector<uint8_t> v;
  void u64(uint64_t x) { put(&x, 8); }
  void u32(uint32_t x) { put(&x, 4); }
  void u16(uint16_t x) { put(&x, 2); }
  void put(const void* p, size_t n) {
    auto* c = static_cast<const uint8_t*>(p);
    v.insert(v.end(), c, c + n);
  }
  void set_u64(size_t off, uint64_t x) { std::memcpy(v.data() + off, &x, 8); }
};

void record(Bytes& b, uint32_t type, size_t body_bytes) {
  b.u32(type);
  b.u16(0);
  b.u16(static_cast<uint16_t>(8 + body_bytes));
  b.v.resize(b.v.size() + body_bytes, 0xab);
}

// A file with one attr (sample_type 0x107, sample_id_all) and `records` records of 24 bytes.
Bytes make_file(int records) {
  Bytes b;
  b.u64(kMagic);
  b.u64(104);
  b.u64(kAttrSize);
  b.u64(104);        // attrs offset
  b.u64(kAttrSize);  // attrs size
  b.u64(104 + kAttrSize);
  b.u64(24ULL * records);
  b.u64(0);
  b.u64(0);
  b.u64(1ULL << 2);  // HEADER_BUILD_ID
  b.u64(0);
  b.u64(0);
  b.u64(0);
  size_t attr = b.v.size();
  b.v.resize(attr + kAttrSize, 0);
  uint32_t type = 1, size = 120;
  std::memcpy(b.v.data() + attr, &type, 4);
  std::memcpy(b.v.data() + attr + 4, &size, 4);
  b.set_u64(attr + 24, 0x107);
  b.set_u64(attr + 40, (1ULL << 18) | (1ULL << 5));
  for (int i = 0; i < records; ++i) record(b, 9, 16);
  return b;
}

TEST(PerfDataHeader, ReadsAttrsFeaturesAndRecords) {
  Bytes b = make_file(3);
  PerfDataHeader h;
  std::string error;
  ASSERT_TRUE(read_perf_data_header(b.v, h, error)) << error;
  EXPECT_FALSE(h.pipe);
  ASSERT_EQ(h.attrs.size(), 1u);
  EXPECT_EQ(h.attrs[0].type, 1u);
  EXPECT_EQ(h.attrs[0].sample_type, 0x107u);
  EXPECT_TRUE(h.attrs[0].sample_id_all);
  EXPECT_TRUE(h.attrs[0].exclude_kernel);
  EXPECT_FALSE(h.attrs[0].exclude_user);
  EXPECT_TRUE(h.has_feature(2));
  EXPECT_FALSE(h.has_feature(3));
  PerfRecordCursor cursor(b.v, h.data_offset, h.data_size);
  PerfRecord r;
  int n = 0;
  while (cursor.next(r)) {
    EXPECT_EQ(r.type, 9u);
    EXPECT_EQ(r.body.size(), 16u);
    ++n;
  }
  EXPECT_EQ(n, 3);
  EXPECT_FALSE(cursor.truncated());
}

TEST(PerfDataHeader, TruncatedAnywhereKeepsTheWholeRecordsBefore) {
  Bytes full = make_file(4);
  size_t data = 104 + kAttrSize;
  for (size_t cut = data; cut < full.v.size(); ++cut) {
    std::vector<uint8_t> bytes(full.v.begin(), full.v.begin() + cut);
    PerfDataHeader h;
    std::string error;
    ASSERT_TRUE(read_perf_data_header(bytes, h, error)) << "cut " << cut << ": " << error;
    PerfRecordCursor cursor(bytes, h.data_offset, h.data_size);
    PerfRecord r;
    size_t n = 0;
    while (cursor.next(r)) ++n;
    EXPECT_EQ(n, (cut - data) / 24) << "cut " << cut;
    EXPECT_EQ(cursor.truncated(), (cut - data) % 24 != 0) << "cut " << cut;
  }
}

TEST(PerfDataHeader, TruncatedHeaderIsRefused) {
  Bytes full = make_file(1);
  for (size_t cut = 0; cut < 104 + kAttrSize; ++cut) {
    std::vector<uint8_t> bytes(full.v.begin(), full.v.begin() + cut);
    PerfDataHeader h;
    std::string error;
    EXPECT_FALSE(read_perf_data_header(bytes, h, error)) << "cut " << cut;
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
}

TEST(PerfDataHeader, WrongMagicAndOtherByteOrderAreRefusedByName) {
  Bytes b = make_file(1);
  std::memcpy(b.v.data(), "PERFILE1", 8);
  PerfDataHeader h;
  std::string error;
  EXPECT_FALSE(read_perf_data_header(b.v, h, error));
  EXPECT_NE(error.find("wrong magic"), std::string::npos) << error;
  b.set_u64(0, __builtin_bswap64(kMagic));
  EXPECT_FALSE(read_perf_data_header(b.v, h, error));
  EXPECT_NE(error.find("byte order"), std::string::npos) << error;
}

TEST(PerfDataHeader, HugeDeclaredSizesAreBounded) {
  Bytes b = make_file(2);
  b.set_u64(48, ~0ULL);  // data size
  PerfDataHeader h;
  std::string error;
  ASSERT_TRUE(read_perf_data_header(b.v, h, error)) << error;
  EXPECT_EQ(h.data_offset + h.data_size, b.v.size());
  b.set_u64(32, 1ULL << 60);  // attrs size
  EXPECT_FALSE(read_perf_data_header(b.v, h, error));
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
  b = make_file(2);
  b.set_u64(16, 8);  // attr size
  EXPECT_FALSE(read_perf_data_header(b.v, h, error));
}

TEST(PerfDataHeader, RecordSmallerThanItsHeaderStopsTheWalk) {
  Bytes b = make_file(2);
  size_t second = 104 + kAttrSize + 24;
  b.v[second + 6] = 4;  // declared size 4 < 8
  b.v[second + 7] = 0;
  PerfDataHeader h;
  std::string error;
  ASSERT_TRUE(read_perf_data_header(b.v, h, error));
  PerfRecordCursor cursor(b.v, h.data_offset, h.data_size);
  PerfRecord r;
  int n = 0;
  while (cursor.next(r)) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(cursor.truncated());
}

TEST(PerfDataHeader, PipeModeHeader) {
  Bytes b;
  b.u64(kMagic);
  b.u64(16);
  record(b, 64, 16);  // PERF_RECORD_HEADER_ATTR-like record
  PerfDataHeader h;
  std::string error;
  ASSERT_TRUE(read_perf_data_header(b.v, h, error)) << error;
  EXPECT_TRUE(h.pipe);
  EXPECT_EQ(h.data_offset, 16u);
  PerfRecordCursor cursor(b.v, h.data_offset, h.data_size);
  PerfRecord r;
  ASSERT_TRUE(cursor.next(r));
  EXPECT_EQ(r.type, 64u);
  EXPECT_FALSE(cursor.next(r));
  EXPECT_FALSE(cursor.truncated());
}

}  // namespace
}  // namespace gp::test::import
