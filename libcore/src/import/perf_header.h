#pragma once
// The `# key : value` lines of `perf script --header` → the session header (private to
// libcore/src/import).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gp/model/session.h"

namespace gp::import {

// One `# event : name = ..., { sample_period, sample_freq } = N, ..., freq = 1` line.
struct PerfEventAttr {
  std::string name;
  uint64_t value = 0;  // frequency in Hz when freq, else the period in events
  bool freq = false;
};

// Applies one header comment (hostname, os release, arch, nrcpus avail, captured on, sample
// duration, event). Unknown keys are ignored.
void apply_header_comment(std::string_view key, std::string_view value, model::Header& header,
                          std::vector<PerfEventAttr>& events);

// Fills frequency or period for the selected event (as printed in samples) from the attrs.
void apply_event_attrs(const std::vector<PerfEventAttr>& events, model::Sampling& sampling);

// True when a sample of the event perf names `printed` is one of `wanted` (gp-import --event):
// the same name, or the name before perf's modifiers ("cpu-clock" selects "cpu-clock:ppp").
bool event_selected(std::string_view wanted, std::string_view printed);

}  // namespace gp::import
