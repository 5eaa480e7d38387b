#pragma once
// The feature sections of a perf.data file (HEADER_* in perf.data-file-format.txt) that gp-import
// uses: build-ids, hostname, os release, arch, nr_cpus, cmdline and event descriptions. In a file
// they follow the data section; in pipe mode the same bytes arrive as HEADER_FEATURE records and
// the build-ids as HEADER_BUILD_ID records. A section that does not parse is skipped (a warning's
// worth, not a failure): the samples do not depend on it.

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gp/import/perf_data_header.h"

namespace gp::import {

struct PerfBuildIdEntry {
  int32_t pid = -1;      // -1 for the host kernel and its modules
  std::string build_id;  // raw bytes
  std::string filename;  // as perf recorded it ("[kernel.kallsyms]", "/usr/bin/python3.11")
};

struct PerfFeatures {
  std::string hostname, os_release, arch;
  uint32_t nr_cpus = 0;
  std::vector<std::string> cmdline;
  std::vector<std::pair<uint64_t, std::string>> event_names;  // sample id -> event name
  std::vector<PerfAttr> event_attrs;                          // from EVENT_DESC (with names)
  std::vector<PerfBuildIdEntry> build_ids;
  uint64_t bad_sections = 0;  // sections that did not parse
};

// Feature ids (bits of the header's feature bitmap).
enum PerfFeature : unsigned {
  kFeatureBuildId = 2,
  kFeatureHostname = 3,
  kFeatureOsRelease = 4,
  kFeatureArch = 6,
  kFeatureNrCpus = 7,
  kFeatureCmdline = 11,
  kFeatureEventDesc = 12,
  kFeatureCompressed = 27,
};

// Reads one feature's bytes into `out` (features gp does not use are ignored).
void read_perf_feature(unsigned feature, std::span<const uint8_t> data, PerfFeatures& out);

// Reads every feature section of a file-mode perf.data (`bytes` is the whole file).
void read_perf_features(std::span<const uint8_t> bytes, const PerfDataHeader& header,
                        PerfFeatures& out);

// Appends the build_id_event records packed in `data` (the build-id section's layout).
void read_perf_build_ids(std::span<const uint8_t> data, PerfFeatures& out);

}  // namespace gp::import
