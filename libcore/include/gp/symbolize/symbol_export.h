#pragma once
// export_symbols: copies every binary and debug file a session's user frames need into a
// `.build-id` store (DIR/.build-id/xx/rest for the binary, rest.debug for separate DWARF), the
// layout --debug-dir reads — so one folder carries everything off-host (what `perf archive`
// does, keyed by build-id and checked). Files already in the store are not copied again.
// Binaries recorded without a build-id cannot be keyed and are reported, not copied.

#include <cstdint>
#include <string>
#include <vector>

#include "gp/model/session.h"
#include "gp/symbolize/debuginfo_finder.h"
#include "gp/util/result.h"

namespace gp::symbolize {

struct ExportedModule {
  std::string path;      // recorded path
  std::string build_id;  // raw bytes
  std::string binary;    // store path written (or already there), "" when none
  std::string debug;
  std::string problem;  // why nothing (or only part) was stored; "" when complete
};

struct ExportReport {
  std::vector<ExportedModule> modules;
  uint64_t files_copied = 0;
  uint64_t bytes_copied = 0;
  uint64_t files_present = 0;  // already in the store
};

// Error only when the store itself cannot be written; missing inputs are per module.
Result<ExportReport> export_symbols(const std::vector<model::Session>& sessions,
                                    const FinderOptions& finder, const std::string& store_dir);

}  // namespace gp::symbolize
