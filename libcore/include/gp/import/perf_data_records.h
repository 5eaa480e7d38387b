#pragma once
// Decoders of the perf.data records gp-import uses, from the layouts of the kernel's
// include/uapi/linux/perf_event.h and perf's tools/perf/Documentation/perf.data-file-format.txt.
// Each takes a record's body (a view into the caller's bytes, gp/import/perf_data_header.h) and
// fills a plain struct whose views point into the same bytes; nothing is copied. A body shorter
// than its fields, or a count that runs past it, is refused (false) with the reason in `error`.
// Host byte order only.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gp/import/perf_data_header.h"

namespace gp::import {

// PERF_RECORD_* types (kernel) and perf's own user types (>= 64).
enum PerfRecordType : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordFork = 7,
  kRecordSample = 9,
  kRecordMmap2 = 10,
  kRecordLostSamples = 13,
  kRecordHeaderAttr = 64,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordAuxtrace = 71,
  kRecordEventUpdate = 78,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
};

// header.misc bits.
constexpr uint16_t kMiscCpumodeMask = 7;
constexpr uint16_t kMiscKernel = 1;
constexpr uint16_t kMiscUser = 2;
constexpr uint16_t kMiscCommExec = 1 << 13;
constexpr uint16_t kMiscMmapBuildId = 1 << 14;
constexpr uint16_t kMiscBuildIdSize = 1 << 15;

// Callchain entries at or above this are PERF_CONTEXT_* markers, not addresses.
constexpr uint64_t kContextMax = static_cast<uint64_t>(-4095);
constexpr uint64_t kContextHv = static_cast<uint64_t>(-32);
constexpr uint64_t kContextKernel = static_cast<uint64_t>(-128);
constexpr uint64_t kContextUser = static_cast<uint64_t>(-512);

// Every PERF_SAMPLE_* bit this decoder knows the layout of (up to PERF_SAMPLE_WEIGHT_STRUCT).
constexpr uint64_t kKnownSampleBits = (1ULL << 25) - 1;
constexpr uint64_t kSampleIdentifier = 1ULL << 16;
constexpr uint64_t kSampleId = 1ULL << 6;

struct PerfSample {
  uint64_t id = 0;  // the event's sample id (IDENTIFIER or ID), 0 when absent
  uint64_t ip = 0;
  int32_t pid = -1, tid = -1;
  uint64_t time = 0;
  bool has_time = false;
  int32_t cpu = -1;
  uint64_t period = 0;
  bool has_period = false;
  std::span<const uint8_t> callchain;  // nr u64 entries, markers included
  size_t callchain_size() const { return callchain.size() / 8; }
  uint64_t callchain_at(size_t i) const;
  uint64_t regs_abi = 0;                    // PERF_SAMPLE_REGS_USER: 0 = no registers
  std::span<const uint8_t> regs_user;       // popcount(sample_regs_user) u64 values
  std::span<const uint8_t> stack_user;      // the copied bytes (dyn_size of them)
};

// A SAMPLE record of the event `attr`. Fields the attr's sample_type lacks keep their defaults.
bool decode_sample(const PerfAttr& attr, std::span<const uint8_t> body, PerfSample& out,
                   std::string& error);

// The sample_id_all trailer of a non-sample record: what it carries of pid/tid, time, id, cpu.
struct PerfSampleId {
  int32_t pid = -1, tid = -1;
  uint64_t time = 0;
  bool has_time = false;
  uint64_t id = 0;
  int32_t cpu = -1;
};
// The trailer's size in bytes for that sample_type.
size_t sample_id_size(uint64_t sample_type);
// Reads the trailer at the end of `body`; false when the body is shorter than it.
bool decode_sample_id(uint64_t sample_type, std::span<const uint8_t> body, PerfSampleId& out);

// Where a record names its event (so that several events can be told apart): the sample id of a
// SAMPLE (IDENTIFIER first, else ID at its place), or of a trailer (IDENTIFIER last, else ID).
// `layout` is the sample_type of the file's first event: perf requires every event of a file to
// put the id at the same place. False when the layout has no id.
bool sample_record_id(uint64_t layout, std::span<const uint8_t> body, uint64_t& id);
bool trailer_record_id(uint64_t layout, std::span<const uint8_t> body, uint64_t& id);

struct PerfMmap {
  int32_t pid = -1, tid = -1;
  uint64_t start = 0, len = 0, pgoff = 0;
  uint32_t prot = 0;  // PROT_* (MMAP2 only; PROT_EXEC for MMAP, which perf records for code)
  bool has_prot = false;
  std::string_view build_id;  // MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  std::string_view filename;
};
bool decode_mmap(std::span<const uint8_t> body, PerfMmap& out, std::string& error);
bool decode_mmap2(uint16_t misc, std::span<const uint8_t> body, PerfMmap& out,
                  std::string& error);

struct PerfComm {
  int32_t pid = -1, tid = -1;
  std::string_view comm;
  bool exec = false;
};
bool decode_comm(uint16_t misc, std::span<const uint8_t> body, PerfComm& out,
                 std::string& error);

// FORK and EXIT share a layout.
struct PerfTask {
  int32_t pid = -1, ppid = -1, tid = -1, ptid = -1;
  uint64_t time = 0;
};
bool decode_task(std::span<const uint8_t> body, PerfTask& out, std::string& error);

// LOST: events the kernel could not write (its ring buffer was full).
bool decode_lost(std::span<const uint8_t> body, uint64_t& lost, std::string& error);

// One build_id_event (a HEADER_BUILD_ID record, or an entry of the build-id feature section).
struct PerfBuildId {
  int32_t pid = -1;
  std::string_view build_id;  // raw bytes (20 for SHA-1 when the size is not recorded)
  std::string_view filename;
};
bool decode_build_id(uint16_t misc, std::span<const uint8_t> body, PerfBuildId& out,
                     std::string& error);

// HEADER_ATTR (pipe mode): an attr and its sample ids.
bool decode_header_attr(std::span<const uint8_t> body, PerfAttr& out, std::string& error);

// EVENT_UPDATE of type NAME: the event with sample id `id` is called `name`. False for other
// update types (not an error: `error` stays empty).
bool decode_event_name(std::span<const uint8_t> body, uint64_t& id, std::string_view& name,
                       std::string& error);

// The bytes after a record that its size does not count: TRACING_DATA and AUXTRACE carry their
// payload that way. 0 for other records (and for a body too short to say).
uint64_t trailing_payload(const PerfRecord& r);

}  // namespace gp::import
