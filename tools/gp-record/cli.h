#pragma once
// gp-record's command line: plain data (defaults here) and the one CLI11 definition that help,
// man-page checks and completions all read.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "gp/cli/tool.h"

namespace gp::record_tool {

struct RecordArgs {
  gp::cli::CommonArgs common;
  uint32_t frequency = 11;  // Hz, gProfiler's default
  uint64_t period = 0;      // events per sample (--period); 0: sample at -F Hz
  double duration = 0;      // seconds; 0 = until SIGINT/SIGTERM (60 with --continuous)
  std::vector<int32_t> pids;
  std::vector<int32_t> tids;
  std::vector<std::string> cgroups;
  std::string cpus;  // "0,2-3"; "" = all
  bool user_only = false;
  bool kernel_only = false;
  bool include_idle = false;
  uint32_t stack_storage_size = 16384;
  std::string output;  // "" = stdout; %h host, %t timestamp
  bool continuous = false;
  std::string output_dir;
  bool rotating_output = false;
  bool no_compress = false;
  bool redact_cmdline = false;
  double flush_interval = 0;  // seconds between chunks; 0: flush_interval_seconds() picks
  std::string event = "cpu-clock";
  std::string sampler = "auto";       // auto, bpf, perf
  std::string stack_walker = "auto";  // auto, gp, kernel (the BPF sampler's user stacks)
  std::string unwind = "auto";        // fp, dwarf, auto (user stacks without frame pointers)
  uint32_t unwind_memory = 16;        // MiB of unwind tables in the kernel
  uint32_t unwind_copies = 1000;      // stack copies a second per CPU before tables
  uint32_t unwind_copy_size = 16384;  // bytes of stack each copy takes at most
  // CPython frames walked in BPF, spliced into native stacks: "" off; "on" (an error where the
  // walk cannot run); "auto" (where it can: otherwise a warning and stacks without them).
  std::string python_frames;
  bool no_python_versions = false;    // --no-python-versions: Python frames without "[pkg==ver]"
  std::vector<std::string> command;   // `-- COMMAND [ARGS...]`: run it and record it
  std::string unwind_cache = "/var/cache/gp/unwind";  // "none": no table cache
};

// The archive of `gp-record -- COMMAND` without -o (as perf writes perf.data).
inline constexpr const char* kCommandOutput = "gp.gpa";

void add_cli(CLI::App& app, RecordArgs& args);

// --flush-interval, or by default the time `cpus` take for about 4000 samples each, between 1
// and 10 s: a flush costs the recorder about the same whatever it carries (a wake-up, a batch
// read, a chunk written; on a busy host mostly the cache misses of a process that slept), so at
// low frequencies it flushes less often. Never longer, above 1 s, than the CPUs take for
// --stack-storage-size samples: an interval of distinct stacks still fits the sample map.
double flush_interval_seconds(const RecordArgs& args, size_t cpus);

// Samples per second per busy CPU to size buffers and flushes for: -F, or with --period the
// rate a clock event's period gives (1e9 / ns), or for a counted event (cycles, ...), whose rate
// depends on the load, kCountedEventRate.
inline constexpr double kCountedEventRate = 1000.0;
double expected_sample_rate(const RecordArgs& args);

// Parses a CPU list such as "0,2-3"; false on a malformed list.
bool parse_cpu_list(const std::string& text, std::vector<int>* cpus);

}  // namespace gp::record_tool
