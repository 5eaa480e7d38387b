#pragma once
// Which of the processes a scan found a session profiles (internal to the driver): gProfiler's
// --min-duration (a process younger than that when found is left out) and
// --max-processes-runtime-profiler (at most N processes per runtime, the busiest by CPU over
// 0.1 s, as its cpu_percent(interval=0.1) ranking).

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "gp/runtime/adapter.h"

namespace gp::runtime::detail {

struct SelectionLimits {
  std::chrono::seconds min_age{0};  // 0: no minimum
  size_t max_per_runtime = 0;       // 0: no limit
  std::string proc_root = "/proc";
};

struct LeftOut {
  Target target;
  std::string why;  // "it started 0.4 s ago (minimum age 30 s)", ...
};

// The targets of `found` to profile. `profiled` counts the processes already profiled per
// runtime in this session and is updated; the others go to `left_out` with why.
std::vector<Target> select_targets(std::vector<Target> found, const SelectionLimits& limits,
                                   std::map<Runtime, size_t>& profiled,
                                   std::vector<LeftOut>& left_out);

}  // namespace gp::runtime::detail
