#pragma once
// Streaming importer of `perf script` text into a model::Session (the engine of gp-import).
//
// Feed it bytes in pieces of any size; it splits lines itself, keeps at most one partial line,
// and interns everything through a SessionBuilder, so memory grows with the number of distinct
// frames and stacks, not with the input. What it builds:
//   processes (pid, comm), threads (tid, pid, comm);
//   one mapping per (pid, DSO) — pid 0 for kernel and module DSOs — with kind kernel for
//     `[kernel.kallsyms]` (and vmlinux files), module for other bracketed kernel DSOs and *.ko
//     files, vdso for `[vdso]`/`[vsyscall]`, anonymous for `[heap]`/`[stack]`/`[anon:..]`,
//     jit_map for `/tmp/perf-N.map`, user otherwise; start/end are unknown (0);
//   locations carrying the address perf printed (perf prints DSO-relative addresses for user
//     DSOs in call chains, absolute ones for the kernel and perf maps) and the mapping; with
//     lines = [function] and status symbolic when perf named the symbol, no lines and status
//     unsymbolized for `[unknown]` (unmapped when the DSO is unknown too);
//   frame kinds: kernel for kernel/module DSOs, jit for perf maps and `jitted-*.so`, native else;
//   one sample per perf sample: count 1, weight = the period perf printed (0 when absent), comm =
//     the process's name at that time (its main thread's comm as last printed), so samples
//     before an exec keep the old name.
// Header: source imported, the sampling event, host info and frequency from `--header` lines.
//
// Not thread-safe; one parser per session.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gp/model/session.h"

namespace gp::import {

struct PerfScriptOptions {
  // Event to import (as perf prints it, or its name before the first ':' modifier, e.g.
  // "cpu-clock" matches "cpu-clock:ppp"). Empty: the first event seen; other events are counted.
  std::string event;
  // Lines longer than this are counted as not understood and skipped (binary garbage).
  size_t max_line_bytes = 1u << 20;
};

struct PerfScriptStats {
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t samples = 0;              // samples imported (of the selected event)
  uint64_t frames = 0;               // frame lines imported
  uint64_t skipped_lines = 0;        // lines not understood
  uint64_t first_skipped_line = 0;   // 1-based line number of the first one, 0 if none
  uint64_t side_band_records = 0;    // PERF_RECORD_* lines (--show-*-events), ignored
  uint64_t samples_without_pid = 0;  // headers with the tid only (pid taken = tid)
  std::string event;                 // the selected event, as perf printed it
  // Samples of events that were not selected, in first-seen order.
  std::vector<std::pair<std::string, uint64_t>> other_events;
};

class PerfScriptParser {
 public:
  explicit PerfScriptParser(model::Session& session, PerfScriptOptions options = {});
  ~PerfScriptParser();
  PerfScriptParser(const PerfScriptParser&) = delete;
  PerfScriptParser& operator=(const PerfScriptParser&) = delete;

  // Takes room once for the locations, stacks and samples an input of `bytes` bytes is likely to
  // make (when its size is known: a regular file), before the first feed. Optional: the lists
  // grow past it, or without it, by doubling.
  void reserve_for(uint64_t bytes);
  // Parses bytes; a line may be split across calls.
  void feed(std::string_view bytes);
  // Ends the input: parses a last line without '\n' and closes the last sample. Also fills the
  // session header (event, duration) from what was seen.
  void finish();
  const PerfScriptStats& stats() const;
  // Call after the archive writer emitted and cleared session.samples (Writer::write_chunk).
  void forget_samples();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses a whole text at once (tests, fuzzing).
PerfScriptStats import_perf_script(std::string_view text, model::Session& session,
                                   const PerfScriptOptions& options = {});

// True when bytes start with the perf.data magic ("PERFILE2").
bool looks_like_perf_data(std::string_view first_bytes);

}  // namespace gp::import
