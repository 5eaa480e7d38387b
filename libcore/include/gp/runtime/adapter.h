#pragma once
// The contract between gp-runtime's driver and its per-runtime adapters.
//
// The driver (libcore/src/runtime/driver.cpp) discovers target processes, picks one adapter per
// target from the runtime's mode (--java-mode, --python-mode, ...), and calls
// Adapter::profile on a thread of its own for each target, for the rest of the session. It turns
// the returned Profile into archive stacks (frame kinds, symbolic locations), the Process entry
// (runtime, appid, app metadata, error frame) and writes one runtime session.
//
// An adapter runs one profiler (a tool on PATH, the JDK's jcmd, gp's own sampler, ...) against
// one process and converts what it prints. It never prints (libcore never prints): problems go
// into Profile::error_frame and Profile::warnings.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "gp/model/session.h"

namespace gp::runtime {

enum class Runtime { java, python, ruby, php, dotnet, node };

// "java", "python", "ruby", "php", "dotnet", "node": the archive's Process.runtime text.
std::string_view runtime_name(Runtime r);

// A process the driver decided to profile.
struct Target {
  pid_t pid = 0;
  Runtime runtime = Runtime::java;
  std::string comm;
  std::string exe;  // /proc/PID/exe target, in the process's mount namespace
  std::vector<std::string> cmdline;
  std::string root;  // "/proc/PID/root": prefix to read the process's files
  std::vector<std::string>
      libraries;  // mapped runtime libraries (libjvm.so, libpython3.11.so, ...)
  std::chrono::steady_clock::time_point discovered;
};

// gProfiler's async-profiler options (gprofiler.md §5.2) as a stock asprof takes them.
struct AsyncProfilerOptions {
  // -e: "cpu", "itimer", or "auto": cpu where this host lets gp open a perf event (as gProfiler
  // probes with perf), else itimer.
  std::string event = "auto";
  std::vector<std::string> features{"vtable"};  // -F: vtable, comptask (gProfiler's default)
  std::vector<std::string> extra;               // more asprof options, as given
};

struct SessionParams {
  int frequency_hz = 11;  // wanted samples per second (adapters may clamp)
  // Time left in the session for this target. Without -d (until SIGINT/SIGTERM, as gp-record)
  // it is a year: such sessions end through the stop token.
  std::chrono::milliseconds duration{60000};
  std::string mode;  // the chosen mode value, e.g. "jfr", "attach-maps"
  // Private 0700 directory of this target ("<work>/<pid>", root-owned), removed by the driver
  // at exit. Empty when it could not be created. A profiler that runs as the target's user (a
  // JVM writing a JFR file) needs the adapter to chown or chmod what it shares.
  std::string work_dir;
  // Python: the driver adds package versions to the frames (adapters need not look at it).
  bool python_versions = false;
  AsyncProfilerOptions async_profiler;  // Java with asprof
  // gProfiler's allocation mode (Java only): the bytes between two allocation samples, and the
  // stacks' counts are bytes allocated. 0: CPU profiling at frequency_hz.
  uint64_t alloc_interval = 0;
  // Java: gProfiler's --java-jattach-timeout, the limit of each jcmd / asprof command.
  std::chrono::seconds attach_timeout{30};
  // Java under JFR: gProfiler's --java-include-method-modifiers ("private static C.m(I)J").
  bool method_modifiers = false;
  // Java under JFR: gProfiler's --java-line-numbers line-of-function ("C.m:12(I)J").
  bool line_numbers = false;
  // Java: gProfiler's --java-collect-thread-names; the driver roots each stack at its thread
  // (add_thread_frames).
  bool thread_names = false;
  // Java under JFR: gProfiler's --java-collect-jvm-flags, the "jvm_flags" app metadata: default,
  // all, none, or a comma-separated list of flag names.
  std::string jvm_flags = "default";
  // Java: gProfiler's version check (--java-no-version-check turns it off): JVMs the engine
  // cannot profile get "[Profiling skipped: profiling this JVM is not supported]".
  bool java_version_check = true;
  // Java: gProfiler's --java-safemode causes that turn Java profiling off for the rest of the
  // run (gp: "hserr"), and --java-full-hserr (the whole hs_err file in the log, not an excerpt).
  std::vector<std::string> java_safemode;
  bool java_full_hserr = false;
  // Java: a directory that keeps the safemode state between runs ("": this run only).
  std::string java_safemode_state;
};

// One frame, named by the runtime's profiler. Fold composes the .col text from these fields
// (e.g. Python: "name (file:start_line)"), so adapters must not pre-format suffixes like "_[j]".
struct Frame {
  model::FrameKind kind = model::FrameKind::unknown;
  std::string name;         // Java "pkg/Cls.m(I)V" style as gProfiler prints it, Python "func"
  std::string file;         // source file when the profiler gives one
  uint32_t start_line = 0;  // first line of the function (py-spy -F aggregates on this)
  uint32_t line = 0;        // current line, 0 when unknown
  // Python: "name==version" of the file's installed package, or "standard-library==3.11.2"
  // (gProfiler's default suffix); filled by the driver, not by adapters.
  std::string package;
};

struct Stack {
  std::vector<Frame> frames;  // root first
  int32_t tid = 0;            // 0 when the profiler does not say
  std::string thread_name;    // when known
  uint64_t count = 0;
};

struct Profile {
  std::vector<Stack> stacks;
  // gProfiler's "[Profiling error: <reason>]" / "[Profiling skipped: <reason>]" when the
  // process could not be profiled (then stacks is usually empty).
  std::string error_frame;
  // One-line problems worth telling the user, without the "gp-runtime: warning: " prefix.
  std::vector<std::string> warnings;
  // Extra app metadata the profiler learned (e.g. {"java_version": ...}) as JSON object text.
  std::string app_metadata_json;
};

// "[Profiling error: reason]" and "[Profiling skipped: reason]".
std::string error_frame(std::string_view reason);
std::string skip_frame(std::string_view reason);

// gProfiler's --java-collect-thread-names (its async-profiler's `threads`): each stack starts with
// its thread's frame, "[name tid=N]" ("[tid=N]" without a name, "[name]" without a tid), of kind
// pseudo (no suffix in the .col). A stack that knows neither is left as it is.
void add_thread_frames(Profile& profile);

class Adapter {
 public:
  virtual ~Adapter() = default;
  // Short name for messages: "jfr", "async-profiler", "gp-python", "py-spy", "rbspy", ...
  virtual std::string_view name() const = 0;
  virtual Runtime runtime() const = 0;
  // Empty when the adapter can run here; else why not ("py-spy is not installed (not on PATH)").
  virtual std::string unavailable_reason() const = 0;
  // Profiles `target` for params.duration, or until `stop` is requested (SIGTERM), and returns
  // what it collected. Blocking; runs on its own thread, one call per target. It must bound its
  // own time (a profiler that hangs is killed), and must never leave the target stopped or
  // with an agent loaded, even when stopped early.
  virtual Profile profile(const Target& target, const SessionParams& params,
                          std::stop_token stop) = 0;
};

}  // namespace gp::runtime
