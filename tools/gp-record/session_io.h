#pragma once
// What gp-record writes around the samples: output names (%h, %t, --output-dir files and the
// last_profile.gpa link), session headers, and the end-of-session captures (kallsyms subset,
// JIT perf maps), plus the live /proc process source.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "gp/archive/byte_io.h"
#include "gp/model/session.h"
#include "gp/proc/kallsyms.h"
#include "gp/proc/process.h"
#include "gp/record/assembler.h"
#include "gp/record/perf_map_tails.h"
#include "sampler.h"

namespace gp::record_tool {

// Processes from this host's /proc through gp::proc (build-ids cached for the whole run). Each
// snapshot pins the process's /tmp in `perf_maps` (its perf map stays readable after it exits)
// until the assembler forgets it.
// With an unwinder, every read of a process's mappings loads their unwind tables, and a
// forgotten process's tables are dropped.
class LiveProcessSource final : public record::ProcessSource {
 public:
  LiveProcessSource(bool redact_cmdline, record::PerfMapTails& perf_maps,
                    Unwinder* unwinder = nullptr)
      : perf_maps_(perf_maps), unwinder_(unwinder) {
    options_.redact_cmdline = redact_cmdline;
  }
  Result<model::Process> snapshot(int32_t pid) override {
    auto p = proc::snapshot_process(pid, options_);
    if (p) perf_maps_.pin(pid);
    return p;
  }
  Result<std::vector<model::Mapping>> mappings(int32_t pid) override {
    auto maps = proc::executable_mappings(pid, options_, &cache_);
    if (maps && unwinder_ != nullptr) unwinder_->on_mappings(pid, *maps);
    return maps;
  }
  bool alive(int32_t pid) override { return proc::process_alive(pid, options_.proc_root); }
  void forgotten(int32_t pid) override {
    perf_maps_.forget(pid);
    if (unwinder_ != nullptr) unwinder_->forget(pid, true);
  }

 private:
  proc::SnapshotOptions options_;
  proc::BuildIdCache cache_;
  record::PerfMapTails& perf_maps_;
  Unwinder* unwinder_;
};

// Expands %h (host name) and %t (local time, YYYYmmdd-HHMMSS) in an output name.
std::string expand_output_name(const std::string& pattern, const std::string& host);

// The path of session file number n in --output-dir.
std::string session_file_name(const std::string& dir, const std::string& host);

// Points <dir>/last_profile.gpa at `file` (gProfiler's last_profile link); errors are ignored.
void update_last_link(const std::string& dir, const std::string& file);

// A new session's header for this recording.
model::Header make_header(const RecordArgs& args, const std::vector<std::string>& argv,
                          const model::HostInfo& host, const char* sampler, double duration_s);

// Captures that need this host: the kallsyms entries covering every sampled kernel address
// (end of session) and copies of the sampled processes' perf maps (during the session for
// processes running JIT code, so that one that exits is not lost, and what was appended since
// at the end). Problems are warnings or details (returned as lines), never failures.
struct CaptureNotes {
  std::vector<std::string> warnings;  // always shown
  std::vector<std::string> details;   // shown with -v
};

class HostCaptures {
 public:
  explicit HostCaptures(record::PerfMapTails& perf_maps) : perf_maps_(perf_maps) {}
  // A new session: it gets whole copies of the perf maps again.
  void begin_session() { perf_maps_.clear(); }
  // Appends to the session the perf-map lines each of `pids` gained since its last copy.
  void copy_perf_maps(model::Session& session, const record::SessionAssembler& assembler,
                      const std::set<int32_t>& pids, CaptureNotes& notes);
  // The end of a session: kallsyms entries, and the perf maps of every sampled process.
  CaptureNotes capture(model::Session& session, const record::SessionAssembler& assembler);

 private:
  std::optional<proc::KallsymsTable> kallsyms_;
  bool kallsyms_failed_ = false;
  record::PerfMapTails& perf_maps_;
};

}  // namespace gp::record_tool
