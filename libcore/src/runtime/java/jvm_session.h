#pragma once
// The steps both Java adapters share around their profiler: deciding whether a JVM may be
// attached to at all, as whom, and waiting out the session while watching the JVM.

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "gp/runtime/adapter.h"
#include "jvm_process.h"

namespace gp::runtime::java {

// gProfiler's reason when the target is gone (gprofiler.md §2.9).
inline constexpr std::string_view kProcessWentDown = "process went down during profiling";

// Inspects target.pid and refuses what must not be attached: a dead process (error frame), a
// process without libjvm.so (jcmd and asprof send it SIGQUIT, which kills most programs), or a
// JVM started with -XX:+DisableAttachMechanism (skip frame). `refusal` is set when refused.
// An admitted JVM's attach socket left by an earlier process with its pid is removed.
std::optional<JvmProcess> admit_jvm(const Target& target, Profile& refusal);

// Whom to run jcmd as: the JVM's effective user when gp is root and the JVM is not (its attach
// listener checks the peer's uid), nobody else when gp already is that user. nullopt + `why`
// when gp cannot act as that user.
std::optional<std::optional<Credentials>> attach_identity(const JvmProcess& jvm, std::string& why);

enum class SessionEnd { elapsed, stopped, exited };

// Sleeps until `deadline`, an early stop, or the JVM's exit (checked every 200 ms).
SessionEnd wait_session(const JvmProcess& jvm, std::chrono::steady_clock::time_point deadline,
                        std::stop_token stop);

// True when the JVM has exited, or is crashing: it has written its HotSpot error log since it
// started. A crashing JVM is given up to 30 s (or an early stop) to finish its log and exit:
// under load writing it can take minutes (HotSpot's ErrorLogTimeout is 2), the session would
// end first, and a JVM gone before the next session would never have its log read.
bool gone_or_crashing(const JvmProcess& jvm, std::stop_token stop);

// gProfiler's "[Profiling error: process went down during profiling]" profile, with the JVM's
// HotSpot error log when it wrote one (check_hotspot_error: safemode "hserr").
Profile went_down(const JvmProcess& jvm, const SessionParams& params);

// gProfiler's refusals before attaching: Java profiling turned off by safemode ("[Profiling
// skipped: disabled due to hserr]"), or a JVM the engine ("jfr", "ap") cannot profile
// ("[Profiling skipped: profiling this JVM is not supported]", with the reason as a warning)
// unless --java-no-version-check. True (and `out` set) when refused.
bool refused(const JvmProcess& jvm, const SessionParams& params, std::string_view engine,
             Profile& out);

// A Profile with just an error frame and the same text as a warning (the per-process message).
Profile failed(const JvmProcess& jvm, std::string_view adapter, const std::string& reason);

}  // namespace gp::runtime::java
