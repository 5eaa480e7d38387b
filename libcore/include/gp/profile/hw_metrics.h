#pragma once
// gProfiler's hardware metrics (--enable-hw-metrics-collection with --perfspect-path, its
// hw_metrics.py): Intel PerfSpect, installed separately, runs once from gp-profile's start as
// `perfspect metrics --duration N --output DIR` (--debug with -v) and writes its summary of the
// run into DIR as <host>_metrics_summary.csv and .html. Every .col written once they exist
// carries them in its header: "hwmetrics" maps each metric to its mean, as the CSV spells it,
// and "htmlblob" is the page gzipped and base64-encoded (both null before, as gProfiler's).

#include <string>
#include <sys/types.h>

#include "gp/profile/plan.h"
#include "gp/util/json.h"

namespace gp::profile {

// PerfSpect's command line (program, then its arguments).
Command perfspect_command(const std::string& perfspect, unsigned duration_s,
                          const std::string& output_dir, bool debug);

struct HwMetrics {
  json::Value data;  // {"metric": "mean", ...} or null
  json::Value html;  // base64 of the gzipped page, or null
};

// What PerfSpect left in `output_dir` for the host named `host` (nulls for what is missing).
HwMetrics read_hw_metrics(const std::string& output_dir, const std::string& host);

// This host's name as PerfSpect names its files (uname's nodename).
std::string host_name();

}  // namespace gp::profile
