#pragma once
// Sample filters shared by every output format: by pid, comm, container, and idle (pid 0).
// Filtering happens on the archive, before folding, so pprof and speedscope see the same
// samples as .col and folded.

#include <cstdint>
#include <string>
#include <vector>

#include "gp/model/session.h"

namespace gp::fold {

// Empty lists match everything. A sample is kept when it matches every non-empty list (any
// entry within a list).
struct SampleFilter {
  std::vector<int32_t> pids;
  std::vector<std::string> comms;       // process comm, as the process frame spells it
  std::vector<std::string> containers;  // container name, or a prefix (>= 4 chars) of its id
  bool exclude_idle = false;            // drop pid 0 (swapper)

  bool empty() const {
    return pids.empty() && comms.empty() && containers.empty() && !exclude_idle;
  }
};

// Removes the samples that do not pass; returns how many samples (by count) were kept.
uint64_t filter_samples(model::Archive& archive, const SampleFilter& filter);

}  // namespace gp::fold
