#pragma once
// What the rbspy, phpspy and dotnet-trace adapters share: finding the tool, the run's limits,
// watching the target, and turning a failed run into gProfiler's error frame.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "gp/runtime/adapter.h"
#include "gp/runtime/subprocess.h"
#include "runtime/spies/spy_output.h"

namespace gp::runtime::spies {

// Where a tool was found, or where gp looked: $PATH first, then the usual install places that
// are not always on root's PATH (cargo's bin, dotnet's global tools, /usr/local, /opt).
struct ToolSearch {
  std::string path;      // absolute path; empty when not found
  std::string searched;  // "PATH, /root/.cargo/bin, /usr/local/bin" for the message
  // "" when found, else "rbspy is not installed (not on PATH, nor in /root/.cargo/bin, ...)".
  std::string unavailable_reason(std::string_view tool) const;
};
ToolSearch find_tool(std::string_view name, std::initializer_list<std::string_view> dirs);

// The session length a tool is given, in whole seconds (rounded, at least 1), as gProfiler
// passes -d.
int64_t whole_seconds(std::chrono::milliseconds duration);

// A short random hex tag for output file names (gProfiler's random_prefix()).
std::string random_tag();

// The target's start time (clock ticks since boot, /proc/PID/stat field 22), to tell the
// same process from a later one with a reused pid. nullopt when the process is gone.
std::optional<uint64_t> process_start_time(pid_t pid);
bool same_process_alive(pid_t pid, uint64_t start_time);

// Reads a whole file the tool wrote, at most `max_bytes`; nullopt when it does not exist.
std::optional<std::string> read_output_file(const std::string& path, size_t max_bytes);

// The reason of a run that did not succeed, for "[Profiling error: REASON]":
// "process went down during profiling" when the target is gone, else
// "rbspy exited with status 1: <first stderr line>" / "rbspy timed out after 12 s".
std::string failure_reason(std::string_view tool, const RunResult& run, bool target_alive);

// One run of a tool against a target that writes its result to `output_path`.
struct SpyRun {
  std::string_view tool;  // "rbspy", for messages
  RunOptions options;
  std::string output_path;
  size_t max_output = 64u << 20;
};

// Runs it and returns what it wrote (the file is removed). On failure sets profile.error_frame
// ("process went down during profiling", "rbspy exited with status 1: ...") and returns
// nullopt; a run that succeeded without writing the file returns "" with a warning. A session
// stopped early (SIGTERM) keeps whatever the tool wrote on its way out.
std::optional<std::string> run_spy(const SpyRun& run, const Target& target, std::stop_token stop,
                                   Profile& profile);

// Adds "TOOL output: N malformed ... skipped (first: ...)" to the profile's warnings.
void report_problems(std::string_view tool, const SpyOutput& out, Profile& profile);

}  // namespace gp::runtime::spies
