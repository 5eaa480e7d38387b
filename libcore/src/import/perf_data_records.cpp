// perf.data record decoders (see gp/import/perf_data_records.h).

#include "gp/import/perf_data_records.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "import/perf_bytes.h"

namespace gp::import {
namespace {

// Bits of sample_type (include/uapi/linux/perf_event.h, enum perf_event_sample_format).
constexpr uint64_t kIp = 1ULL << 0;
constexpr uint64_t kTid = 1ULL << 1;
constexpr uint64_t kTime = 1ULL << 2;
constexpr uint64_t kAddr = 1ULL << 3;
constexpr uint64_t kRead = 1ULL << 4;
constexpr uint64_t kCallchain = 1ULL << 5;
constexpr uint64_t kCpu = 1ULL << 7;
constexpr uint64_t kPeriod = 1ULL << 8;
constexpr uint64_t kStreamId = 1ULL << 9;
constexpr uint64_t kRaw = 1ULL << 10;
constexpr uint64_t kBranchStack = 1ULL << 11;
constexpr uint64_t kRegsUser = 1ULL << 12;
constexpr uint64_t kStackUser = 1ULL << 13;
constexpr uint64_t kWeight = 1ULL << 14;
constexpr uint64_t kDataSrc = 1ULL << 15;
constexpr uint64_t kTransaction = 1ULL << 17;
constexpr uint64_t kRegsIntr = 1ULL << 18;
constexpr uint64_t kPhysAddr = 1ULL << 19;
constexpr uint64_t kAux = 1ULL << 20;
constexpr uint64_t kCgroup = 1ULL << 21;
constexpr uint64_t kDataPageSize = 1ULL << 22;
constexpr uint64_t kCodePageSize = 1ULL << 23;
constexpr uint64_t kWeightStruct = 1ULL << 24;
// read_format bits.
constexpr uint64_t kReadEnabled = 1;
constexpr uint64_t kReadRunning = 2;
constexpr uint64_t kReadId = 4;
constexpr uint64_t kReadGroup = 8;
constexpr uint64_t kReadLost = 16;
constexpr uint64_t kBranchHwIndex = 1ULL << 17;  // PERF_SAMPLE_BRANCH_HW_INDEX
constexpr size_t kBranchEntryBytes = 24;

bool short_record(const char* what, std::string& error) {
  error = std::string(what) + " record shorter than its fields";
  return false;
}

// PERF_SAMPLE_READ's size for a read_format (a group's count comes from the record).
bool skip_read(PerfBytes& in, uint64_t read_format) {
  uint64_t per_value = 8 + ((read_format & kReadId) ? 8 : 0) + ((read_format & kReadLost) ? 8 : 0);
  uint64_t times = ((read_format & kReadEnabled) ? 8 : 0) + ((read_format & kReadRunning) ? 8 : 0);
  if (!(read_format & kReadGroup)) return in.skip(per_value + times);
  uint64_t nr;
  if (!in.u64(nr) || !in.skip(times)) return false;
  if (nr > in.left() / per_value) return false;
  return in.skip(nr * per_value);
}

// The fields after PERIOD that gp does not use, skipped in their documented order; then the
// user registers and stack copy, which it keeps.
bool decode_sample_tail(const PerfAttr& attr, PerfBytes& in, PerfSample& out, std::string& error) {
  uint64_t t = attr.sample_type;
  if ((t & kRead) && !skip_read(in, attr.read_format)) return short_record("sample read", error);
  if (t & kCallchain) {
    uint64_t nr;
    if (!in.u64(nr)) return short_record("sample", error);
    if (nr > in.left() / 8) {
      error = "sample callchain of " + std::to_string(nr) + " entries is longer than its record";
      return false;
    }
    in.bytes(nr * 8, out.callchain);
  }
  if (t & kRaw) {
    uint32_t size;
    if (!in.u32(size) || !in.skip(size)) return short_record("sample raw", error);
  }
  if (t & kBranchStack) {
    uint64_t nr;
    if (!in.u64(nr)) return short_record("sample branch", error);
    if ((attr.branch_sample_type & kBranchHwIndex) && !in.skip(8))
      return short_record("sample branch", error);
    if (nr > in.left() / kBranchEntryBytes || !in.skip(nr * kBranchEntryBytes))
      return short_record("sample branch", error);
  }
  if (t & kRegsUser) {
    if (!in.u64(out.regs_abi)) return short_record("sample regs", error);
    if (out.regs_abi != 0 &&
        !in.bytes(8ULL * std::popcount(attr.sample_regs_user), out.regs_user))
      return short_record("sample regs", error);
  }
  if (t & kStackUser) {
    uint64_t size;
    if (!in.u64(size)) return short_record("sample stack", error);
    if (size != 0) {
      std::span<const uint8_t> copy;
      uint64_t dyn_size;
      if (!in.bytes(size, copy) || !in.u64(dyn_size)) return short_record("sample stack", error);
      out.stack_user = copy.first(dyn_size < size ? dyn_size : size);
    }
  }
  // The rest (weight, data_src, transaction, intr regs, phys addr, aux, cgroup, page sizes) is
  // not used: the record's size already bounds it, so it is not walked.
  return true;
}

}  // namespace

uint64_t PerfSample::callchain_at(size_t i) const { return load_at<uint64_t>(callchain, i * 8); }

bool decode_sample(const PerfAttr& attr, std::span<const uint8_t> body, PerfSample& out,
                   std::string& error) {
  out = PerfSample{};
  uint64_t t = attr.sample_type;
  if (t & ~kKnownSampleBits) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "sample_type 0x%llx has fields gp-import does not know",
                  static_cast<unsigned long long>(t));
    error = buf;
    return false;
  }
  PerfBytes in(body);
  uint64_t skipped;
  uint32_t res;
  bool ok = true;
  if (t & kSampleIdentifier) ok = ok && in.u64(out.id);
  if (t & kIp) ok = ok && in.u64(out.ip);
  if (t & kTid) ok = ok && in.i32(out.pid) && in.i32(out.tid);
  if (t & kTime) ok = ok && in.u64(out.time), out.has_time = true;
  if (t & kAddr) ok = ok && in.u64(skipped);
  if (t & kSampleId) ok = ok && in.u64(out.id);
  if (t & kStreamId) ok = ok && in.u64(skipped);
  if (t & kCpu) ok = ok && in.i32(out.cpu) && in.u32(res);
  if (t & kPeriod) ok = ok && in.u64(out.period), out.has_period = true;
  if (!ok) return short_record("sample", error);
  return decode_sample_tail(attr, in, out, error);
}

size_t sample_id_size(uint64_t t) {
  size_t n = 0;
  for (uint64_t bit : {kTid, kTime, kSampleId, kStreamId, kCpu, kSampleIdentifier})
    if (t & bit) n += 8;
  return n;
}

bool decode_sample_id(uint64_t t, std::span<const uint8_t> body, PerfSampleId& out) {
  out = PerfSampleId{};
  size_t size = sample_id_size(t);
  if (size > body.size()) return false;
  PerfBytes in(body.subspan(body.size() - size));
  uint64_t skipped;
  uint32_t res;
  if (t & kTid) in.i32(out.pid), in.i32(out.tid);
  if (t & kTime) in.u64(out.time), out.has_time = true;
  if (t & kSampleId) in.u64(out.id);
  if (t & kStreamId) in.u64(skipped);
  if (t & kCpu) in.i32(out.cpu), in.u32(res);
  if (t & kSampleIdentifier) in.u64(out.id);
  return true;
}

bool sample_record_id(uint64_t layout, std::span<const uint8_t> body, uint64_t& id) {
  size_t pos;
  if (layout & kSampleIdentifier) {
    pos = 0;
  } else if (layout & kSampleId) {
    pos = 0;
    for (uint64_t bit : {kIp, kTid, kTime, kAddr})
      if (layout & bit) pos += 8;
  } else {
    return false;
  }
  if (body.size() < pos + 8) return false;
  id = load_at<uint64_t>(body, pos);
  return true;
}

bool trailer_record_id(uint64_t layout, std::span<const uint8_t> body, uint64_t& id) {
  size_t from_end;
  if (layout & kSampleIdentifier) {
    from_end = 8;
  } else if (layout & kSampleId) {
    from_end = 8 + ((layout & kStreamId) ? 8 : 0) + ((layout & kCpu) ? 8 : 0);
  } else {
    return false;
  }
  if (body.size() < from_end) return false;
  id = load_at<uint64_t>(body, body.size() - from_end);
  return true;
}

bool decode_mmap(std::span<const uint8_t> body, PerfMmap& out, std::string& error) {
  out = PerfMmap{};
  PerfBytes in(body);
  if (!in.i32(out.pid) || !in.i32(out.tid) || !in.u64(out.start) || !in.u64(out.len) ||
      !in.u64(out.pgoff))
    return short_record("mmap", error);
  out.filename = in.c_string();
  return true;
}

bool decode_mmap2(uint16_t misc, std::span<const uint8_t> body, PerfMmap& out,
                  std::string& error) {
  out = PerfMmap{};
  PerfBytes in(body);
  if (!in.i32(out.pid) || !in.i32(out.tid) || !in.u64(out.start) || !in.u64(out.len) ||
      !in.u64(out.pgoff))
    return short_record("mmap2", error);
  std::span<const uint8_t> ident;  // maj, min, ino, ino_generation, or the build-id
  uint32_t flags;
  if (!in.bytes(24, ident) || !in.u32(out.prot) || !in.u32(flags))
    return short_record("mmap2", error);
  out.has_prot = true;
  if (misc & kMiscMmapBuildId) {
    uint8_t size = ident[0] <= 20 ? ident[0] : 20;
    out.build_id = {reinterpret_cast<const char*>(ident.data() + 4), size};
  } else {
    out.maj = load_at<uint32_t>(ident, 0);
    out.min = load_at<uint32_t>(ident, 4);
    out.ino = load_at<uint64_t>(ident, 8);
  }
  out.filename = in.c_string();
  return true;
}

bool decode_comm(uint16_t misc, std::span<const uint8_t> body, PerfComm& out,
                 std::string& error) {
  out = PerfComm{};
  PerfBytes in(body);
  if (!in.i32(out.pid) || !in.i32(out.tid)) return short_record("comm", error);
  out.comm = in.c_string();
  out.exec = misc & kMiscCommExec;
  return true;
}

bool decode_task(std::span<const uint8_t> body, PerfTask& out, std::string& error) {
  out = PerfTask{};
  PerfBytes in(body);
  if (!in.i32(out.pid) || !in.i32(out.ppid) || !in.i32(out.tid) || !in.i32(out.ptid) ||
      !in.u64(out.time))
    return short_record("fork/exit", error);
  return true;
}

bool decode_lost(std::span<const uint8_t> body, uint64_t& lost, std::string& error) {
  PerfBytes in(body);
  uint64_t id;
  if (!in.u64(id) || !in.u64(lost)) return short_record("lost", error);
  return true;
}

bool decode_build_id(uint16_t misc, std::span<const uint8_t> body, PerfBuildId& out,
                     std::string& error) {
  out = PerfBuildId{};
  PerfBytes in(body);
  std::span<const uint8_t> id;
  if (!in.i32(out.pid) || !in.bytes(24, id)) return short_record("build-id", error);
  size_t size = 20;
  if (misc & kMiscBuildIdSize) size = id[20] <= 20 ? id[20] : 20;
  out.build_id = {reinterpret_cast<const char*>(id.data()), size};
  out.filename = in.c_string();
  return true;
}

bool decode_header_attr(std::span<const uint8_t> body, PerfAttr& out, std::string& error) {
  out = PerfAttr{};
  uint32_t size = 0;
  if (!parse_perf_attr(body, out, &size)) {
    error = "attr record shorter than its attr";
    return false;
  }
  for (size_t off = size; off + 8 <= body.size(); off += 8) out.ids.push_back(load_at<uint64_t>(body, off));
  return true;
}

bool decode_event_name(std::span<const uint8_t> body, uint64_t& id, std::string_view& name,
                       std::string& error) {
  PerfBytes in(body);
  uint64_t type;
  if (!in.u64(type) || !in.u64(id)) {
    short_record("event update", error);
    return false;
  }
  constexpr uint64_t kUpdateName = 2;  // PERF_EVENT_UPDATE__NAME (UNIT 0, SCALE 1, CPUS 3)
  if (type != kUpdateName) return false;
  name = in.c_string();
  return true;
}

uint64_t trailing_payload(const PerfRecord& r) {
  // perf pads TRACING_DATA's payload to 8 bytes itself and counts the padding.
  if (r.type == kRecordHeaderTracingData && r.body.size() >= 4) return load_at<uint32_t>(r.body, 0);
  if (r.type == kRecordAuxtrace && r.body.size() >= 8) return load_at<uint64_t>(r.body, 0);
  return 0;
}

}  // namespace gp::import
