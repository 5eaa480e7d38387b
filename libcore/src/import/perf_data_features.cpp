// perf.data feature sections (see gp/import/perf_data_features.h).

#include "gp/import/perf_data_features.h"

#include <cstring>

#include "gp/import/perf_data_records.h"
#include "import/perf_bytes.h"

namespace gp::import {
namespace {

// HEADER_EVENT_DESC: u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, name, ids.
bool read_event_desc(PerfBytes in, PerfFeatures& out) {
  uint32_t nr, attr_size;
  if (!in.u32(nr) || !in.u32(attr_size)) return false;
  for (uint32_t i = 0; i < nr; ++i) {
    std::span<const uint8_t> raw;
    PerfAttr attr;
    uint32_t nr_ids;
    if (!in.bytes(attr_size, raw) || !parse_perf_attr(raw, attr) || !in.u32(nr_ids) ||
        !in.string(attr.name) || nr_ids > in.left() / 8)
      return false;
    for (uint32_t k = 0; k < nr_ids; ++k) {
      uint64_t id = 0;
      in.u64(id);
      attr.ids.push_back(id);
      out.event_names.emplace_back(id, attr.name);
    }
    out.event_attrs.push_back(std::move(attr));
  }
  return true;
}

bool read_cmdline(PerfBytes in, PerfFeatures& out) {
  uint32_t nr;
  if (!in.u32(nr) || nr > in.left() / 4) return false;
  out.cmdline.clear();
  for (uint32_t i = 0; i < nr; ++i) {
    std::string arg;
    if (!in.string(arg)) return false;
    out.cmdline.push_back(std::move(arg));
  }
  return true;
}

}  // namespace

void read_perf_build_ids(std::span<const uint8_t> data, PerfFeatures& out) {
  PerfRecordCursor cursor(data, 0, data.size());
  PerfRecord r;
  std::string error;
  while (cursor.next(r)) {
    PerfBuildId b;
    if (!decode_build_id(r.misc, r.body, b, error)) continue;
    out.build_ids.push_back({b.pid, std::string(b.build_id), std::string(b.filename)});
  }
  if (cursor.truncated()) ++out.bad_sections;
}

void read_perf_feature(unsigned feature, std::span<const uint8_t> data, PerfFeatures& out) {
  PerfBytes in(data);
  bool ok = true;
  switch (feature) {
    case kFeatureBuildId:
      read_perf_build_ids(data, out);
      break;
    case kFeatureHostname:
      ok = in.string(out.hostname);
      break;
    case kFeatureOsRelease:
      ok = in.string(out.os_release);
      break;
    case kFeatureArch:
      ok = in.string(out.arch);
      break;
    case kFeatureNrCpus:
      ok = in.u32(out.nr_cpus);
      break;
    case kFeatureCmdline:
      ok = read_cmdline(in, out);
      break;
    case kFeatureEventDesc:
      ok = read_event_desc(in, out);
      break;
    default:
      break;
  }
  if (!ok) ++out.bad_sections;
}

void read_perf_features(std::span<const uint8_t> bytes, const PerfDataHeader& header,
                        PerfFeatures& out) {
  if (header.pipe || header.feature_table == 0) return;
  // One perf_file_section (offset, size) per feature bit set, in bit order.
  uint64_t at = header.feature_table;
  for (unsigned bit = 0; bit < 256; ++bit) {
    if (!header.has_feature(bit)) continue;
    if (bytes.size() < 16 || at > bytes.size() - 16) {
      ++out.bad_sections;
      return;
    }
    const uint64_t offset = load_at<uint64_t>(bytes, at);
    const uint64_t size = load_at<uint64_t>(bytes, at + 8);
    at += 16;
    if (offset > bytes.size() || size > bytes.size() - offset) {
      ++out.bad_sections;
      continue;
    }
    read_perf_feature(bit, bytes.subspan(offset, size), out);
  }
}

}  // namespace gp::import
