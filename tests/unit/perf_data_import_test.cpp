// The native perf.data reader on synthetic pipe-mode streams built from the documented layouts:
// what a sample becomes in the session, and what bad records and cut streams leave.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gp/import/perf_data.h"
#include "gp/import/perf_data_records.h"

namespace gp::test::import {
namespace {

using gp::import::PerfDataImporter;

constexpr uint64_t kMagic = 0x32454c4946524550ULL;
// IP | TID | TIME | CALLCHAIN | PERIOD
constexpr uint64_t kSampleType = 0x1 | 0x2 | 0x4 | 0x20 | 0x100;

struct Stream {
  std::vector<uint8_t> v;
  Stream() {
    u64(kMagic);
    u64(16);
  }
  void u64(uint64_t x) { put(&x, 8); }
  void u32(uint32_t x) { put(&x, 4); }
  void put(const void* p, size_t n) {
    // resize + memcpy: GCC 12 takes insert() at the end of an empty vector for an overflow.
    size_t at = v.size();
    v.resize(at + n);
    std::memcpy(v.data() + at, p, n);
  }
  // A record whose body is `body`, padded to 8 bytes.
  void record(uint32_t type, uint16_t misc, std::vector<uint8_t> body) {
    body.resize((body.size() + 7) / 8 * 8, 0);
    u32(type);
    uint16_t size = static_cast<uint16_t>(8 + body.size());
    put(&misc, 2);
    put(&size, 2);
    v.insert(v.end(), body.begin(), body.end());
  }
};

struct Body {
  std::vector<uint8_t> v;
  Body& u64(uint64_t x) { return put(&x, 8); }
  Body& u32(uint32_t x) { return put(&x, 4); }
  Body& str(const std::string& s) { return put(s.c_str(), s.size() + 1); }
  Body& put(const void* p, size_t n) {
    auto* c = static_cast<const uint8_t*>(p);
    v.insert(v.end(), c, c + n);
    return *this;
  }
};

// HEADER_ATTR for a cpu-clock event at 99 Hz, sample_id_all, with id 7.
void attr(Stream& s, uint64_t sample_type = kSampleType) {
  std::vector<uint8_t> a(112, 0);
  uint32_t type = 1, size = 112;
  uint64_t freq = 99, flags = (1ULL << 10) | (1ULL << 18);
  std::memcpy(a.data(), &type, 4);
  std::memcpy(a.data() + 4, &size, 4);
  std::memcpy(a.data() + 16, &freq, 8);
  std::memcpy(a.data() + 24, &sample_type, 8);
  std::memcpy(a.data() + 40, &flags, 8);
  Body b;
  b.put(a.data(), a.size()).u64(7);
  s.record(gp::import::kRecordHeaderAttr, 0, b.v);
}

// The trailer of IP|TID|TIME|... with sample_id_all: pid, tid, time.
Body& trailer(Body& b, uint32_t pid, uint64_t time) { return b.u32(pid).u32(pid).u64(time); }

void comm(Stream& s, uint32_t pid, const std::string& name, uint64_t time) {
  Body b;
  b.u32(pid).u32(pid).str(name);
  b.v.resize((b.v.size() + 7) / 8 * 8, 0);
  s.record(gp::import::kRecordComm, gp::import::kMiscCommExec, trailer(b, pid, time).v);
}

void mmap2(Stream& s, uint32_t pid, uint64_t start, uint64_t len, const std::string& path,
           uint64_t time) {
  Body b;
  b.u32(pid).u32(pid).u64(start).u64(len).u64(0);
  uint8_t id[24] = {20, 0, 0, 0};
  for (int i = 0; i < 20; ++i) id[4 + i] = static_cast<uint8_t>(0xa0 + i);
  b.put(id, 24).u32(5 /* PROT_READ|PROT_EXEC */).u32(2).str(path);
  b.v.resize((b.v.size() + 7) / 8 * 8, 0);
  s.record(gp::import::kRecordMmap2, gp::import::kMiscMmapBuildId | 2,
           trailer(b, pid, time).v);
}

void sample(Stream& s, uint32_t pid, uint64_t time, std::vector<uint64_t> chain,
            uint64_t period = 1000, uint64_t declared_nr = 0) {
  Body b;
  b.u64(chain.empty() ? 0 : chain[1]).u32(pid).u32(pid).u64(time).u64(period);
  b.u64(declared_nr ? declared_nr : chain.size());
  for (uint64_t ip : chain) b.u64(ip);
  s.record(gp::import::kRecordSample, 1, b.v);
}

void round(Stream& s) { s.record(gp::import::kRecordFinishedRound, 0, {}); }

const uint64_t kKernel = gp::import::kContextKernel, kUser = gp::import::kContextUser;

Stream typical() {
  Stream s;
  attr(s);
  comm(s, 42, "worker", 10);
  mmap2(s, 42, 0x400000, 0x10000, "/usr/bin/worker", 11);
  sample(s, 42, 20, {kKernel, 0xffffffff81000010, 0xffffffff81000020, kUser, 0x401000, 0x402000});
  sample(s, 42, 21, {kUser, 0x401000, 0x402000}, 3000);
  round(s);
  return s;
}

TEST(PerfDataImport, SampleKeepsAddressesMappingsAndBuildIds) {
  Stream s = typical();
  model::Session session;
  PerfDataImporter imp(session);
  std::string error;
  ASSERT_TRUE(imp.import(s.v, error)) << error;
  EXPECT_TRUE(imp.stats().pipe);
  EXPECT_EQ(imp.stats().samples, 2u);
  EXPECT_EQ(imp.stats().event, "cpu-clock");
  EXPECT_EQ(session.header.sampling.frequency_hz, 99u);
  ASSERT_EQ(session.samples.size(), 2u);
  const model::Sample& first = session.samples[0];
  EXPECT_EQ(first.pid, 42);
  EXPECT_EQ(first.comm, "worker");
  EXPECT_EQ(first.weight, 1000u);
  const model::Stack& st = session.stack(first.stack_id);
  ASSERT_EQ(st.location_ids.size(), 4u);
  const model::Location& k0 = session.location(st.location_ids[0]);
  EXPECT_EQ(k0.address, 0xffffffff81000010u);
  EXPECT_EQ(k0.kind, model::FrameKind::kernel);
  EXPECT_FALSE(k0.is_return_address);
  EXPECT_TRUE(session.location(st.location_ids[1]).is_return_address);
  const model::Location& u0 = session.location(st.location_ids[2]);
  EXPECT_FALSE(u0.is_return_address);  // the interrupted instruction of the user part
  EXPECT_EQ(u0.address, 0x401000u);
  EXPECT_EQ(u0.file_offset, 0x1000u);
  const model::Mapping& m = session.mapping(u0.mapping_id);
  EXPECT_EQ(m.path, "/usr/bin/worker");
  EXPECT_EQ(m.pid, 42);
  ASSERT_EQ(m.build_id.size(), 20u);
  EXPECT_EQ(static_cast<uint8_t>(m.build_id[0]), 0xa0);
  EXPECT_EQ(session.samples[1].weight, 3000u);
  EXPECT_EQ(imp.kernel_addresses().size(), 2u);
}

TEST(PerfDataImport, RecordsAreTakenInTimeOrderWithinARound) {
  Stream s;
  attr(s);
  // The mapping comes later in the stream but earlier in time (another CPU's buffer).
  sample(s, 42, 20, {kUser, 0x401000});
  mmap2(s, 42, 0x400000, 0x10000, "/usr/bin/worker", 11);
  round(s);
  model::Session session;
  PerfDataImporter imp(session);
  std::string error;
  ASSERT_TRUE(imp.import(s.v, error)) << error;
  ASSERT_EQ(session.samples.size(), 1u);
  const model::Location& l = session.location(session.stack(session.samples[0].stack_id).location_ids[0]);
  EXPECT_NE(l.mapping_id, 0u);
}

TEST(PerfDataImport, CutAnywhereKeepsTheRecordsBefore) {
  Stream full = typical();
  for (size_t cut = 16; cut < full.v.size(); ++cut) {
    std::vector<uint8_t> bytes(full.v.begin(), full.v.begin() + cut);
    model::Session session;
    PerfDataImporter imp(session);
    std::string error;
    ASSERT_TRUE(imp.import(bytes, error)) << "cut " << cut << ": " << error;
    EXPECT_LE(imp.stats().samples, 2u);
    EXPECT_EQ(session.total_samples(), imp.stats().samples);
  }
}

TEST(PerfDataImport, CallchainLongerThanItsRecordIsSkippedWithAReason) {
  Stream s;
  attr(s);
  sample(s, 42, 20, {kUser, 0x401000}, 1000, 1ULL << 40);
  sample(s, 42, 21, {kUser, 0x401000});
  round(s);
  model::Session session;
  PerfDataImporter imp(session);
  std::string error;
  ASSERT_TRUE(imp.import(s.v, error)) << error;
  EXPECT_EQ(imp.stats().samples, 1u);
  EXPECT_EQ(imp.stats().bad_records, 1u);
  EXPECT_NE(imp.stats().first_problem.find("longer than its record"), std::string::npos)
      << imp.stats().first_problem;
}

TEST(PerfDataImport, UnknownSampleTypeIsNamed) {
  Stream s;
  attr(s, kSampleType | (1ULL << 40));
  sample(s, 42, 20, {kUser, 0x401000});
  round(s);
  model::Session session;
  PerfDataImporter imp(session);
  std::string error;
  ASSERT_TRUE(imp.import(s.v, error)) << error;
  EXPECT_EQ(imp.stats().samples, 0u);
  EXPECT_NE(imp.stats().first_problem.find("does not know"), std::string::npos)
      << imp.stats().first_problem;
}

TEST(PerfDataImport, CompressedRecordsAreRefusedByName) {
  Stream s;
  attr(s);
  s.record(gp::import::kRecordCompressed, 0, std::vector<uint8_t>(16, 0));
  model::Session session;
  PerfDataImporter imp(session);
  std::string error;
  EXPECT_FALSE(imp.import(s.v, error));
  EXPECT_NE(error.find("compressed"), std::string::npos) << error;
}

}  // namespace
}  // namespace gp::test::import
