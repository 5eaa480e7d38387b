#pragma once
// gProfiler's Java safemode and version check (gprofiler/profilers/java.py, JavaSafemodeOptions):
// which JVMs the Java adapters refuse before attaching, what they look for when a profiled JVM
// went down (its HotSpot error log), and Java profiling turned off for the rest of the run once a
// safemode cause happened. The state outlives one gp-runtime run through
// SessionParams::java_safemode_state, a directory its caller (gp-profile) keeps between sessions.

#include <optional>
#include <string>
#include <string_view>

#include "gp/runtime/adapter.h"
#include "jvm_process.h"

namespace gp::runtime::java {

// The cause Java profiling was turned off for ("hserr"), read from the state (or this run's
// memory without a state directory); nullopt while it is on.
std::optional<std::string> safemode_disabled(const SessionParams& params);

// gProfiler's _disable_profiling: when `cause` is one of params.java_safemode and Java profiling is
// still on, turns it off (in the state directory, or this run's memory) and says so in `out`.
void safemode_disable(const SessionParams& params, std::string_view cause, Profile& out);

// The file that marks `pid` as a JVM gp-runtime profiled in this run:
// <state>/profiled/<pid>. gp-profile's safemode watch (java_safemode_watch.h) reads it when
// the kernel reports that process OOM-killed or dead of a fatal signal (gProfiler's
// _profiled_pids, which must outlive the gp-runtime process of one session).
std::string profiled_jvm_marker(const std::string& state_dir, int pid);

// Marks the JVM as profiled (gProfiler adds it to _profiled_pids once its checks passed, before
// attaching); nothing without a state directory.
void remember_profiled_jvm(const SessionParams& params, int pid);

// Why the engine ("jfr" or "ap") cannot profile this JVM, "" when it can: gProfiler's version
// check (a HotSpot JDK older than 7 for async-profiler), and for JFR a JDK older than 8u262 or
// 11, or Flight Recorder turned off on its command line (-XX:-FlightRecorder).
std::string unsupported_jvm(const JvmProcess& jvm, std::string_view engine,
                            const std::string& proc_root = "/proc");

// The HotSpot error log a JVM that went down wrote (gProfiler's locate_hotspot_error_file:
// -XX:ErrorFile= with %p, else hs_err_pid<nspid>.log in its working directory, else in /tmp),
// as a path readable here; "" when there is none.
std::string find_hotspot_error_file(const JvmProcess& jvm);

// gProfiler's excerpt of an hs_err file: its vm_info, siginfo, problematic frame, native frames
// and container information.
std::string hotspot_error_excerpt(const std::string& contents);

// gProfiler's _check_hotspot_error, for a profiled JVM that went down during the session: when it
// wrote an hs_err file, a warning with the excerpt (or the whole file with
// params.java_full_hserr), kept in the state directory for the caller's log as
// hserr-<pid>.log, and Java profiling turned off (safemode "hserr").
void check_hotspot_error(const JvmProcess& jvm, const SessionParams& params, Profile& out);

}  // namespace gp::runtime::java
