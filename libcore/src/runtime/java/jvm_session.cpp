// Shared steps of the Java adapters (see jvm_session.h).
#include "jvm_session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "attach_socket.h"
#include "gp/proc/process.h"
#include "safemode.h"

namespace gp::runtime::java {

std::optional<JvmProcess> admit_jvm(const Target& target, Profile& refusal) {
  auto jvm = inspect_jvm(target.pid);
  // A JVM that has just started may not handle SIGQUIT yet, and the attach request (SIGQUIT)
  // would kill it: give it a moment (gProfiler waits for new processes too, §5.1).
  for (int i = 0; i < 20 && jvm && jvm->maps_libjvm && !jvm->catches_sigquit; ++i) {
    usleep(100000);
    jvm = inspect_jvm(target.pid);
  }
  if (!jvm) {
    refusal.error_frame = error_frame(kProcessWentDown);
    return std::nullopt;
  }
  if (!jvm->maps_libjvm) {
    refusal.error_frame = skip_frame("not a HotSpot JVM (libjvm.so is not mapped)");
    return std::nullopt;
  }
  if (!jvm->catches_sigquit) {
    refusal.error_frame =
        skip_frame("the JVM does not handle SIGQUIT (-Xrs?), attaching would kill it");
    return std::nullopt;
  }
  if (attach_disabled(jvm->cmdline)) {
    refusal.error_frame = skip_frame("the JVM disables attaching (-XX:+DisableAttachMechanism)");
    return std::nullopt;
  }
  // jcmd and asprof would take a socket left by an earlier process with this pid for the JVM's.
  remove_stale_attach_socket(*jvm);
  return std::move(*jvm);
}

std::optional<std::optional<Credentials>> attach_identity(const JvmProcess& jvm, std::string& why) {
  uid_t me = geteuid();
  if (me == jvm.owner.uid) return std::optional<Credentials>();
  if (me == 0) return std::optional<Credentials>(jvm.owner);
  why = "the JVM runs as uid " + std::to_string(jvm.owner.uid) +
        "; attaching to another user's JVM needs root";
  return std::nullopt;
}

SessionEnd wait_session(const JvmProcess& jvm, std::chrono::steady_clock::time_point deadline,
                        std::stop_token stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  for (;;) {
    if (stop.stop_requested()) return SessionEnd::stopped;
    if (!still_running(jvm)) return SessionEnd::exited;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return SessionEnd::elapsed;
    auto step = std::min<std::chrono::steady_clock::duration>(deadline - now,
                                                              std::chrono::milliseconds(200));
    cv.wait_for(lock, stop, step, [] { return false; });
  }
}

bool gone_or_crashing(const JvmProcess& jvm, std::stop_token stop) {
  if (!still_running(jvm)) return true;
  std::string log = find_hotspot_error_file(jvm);
  struct stat st {};
  if (log.empty() || stat(log.c_str(), &st) != 0) return false;
  // A log older than the JVM is an earlier process's with the same pid.
  if (st.st_mtime + 1 < proc::start_ticks_to_wall_ns(jvm.start_ticks) / 1'000'000'000) return false;
  wait_session(jvm, std::chrono::steady_clock::now() + std::chrono::seconds(30), stop);
  return true;
}

Profile went_down(const JvmProcess& jvm, const SessionParams& params) {
  Profile p;
  p.error_frame = error_frame(kProcessWentDown);
  check_hotspot_error(jvm, params, p);
  return p;
}

bool refused(const JvmProcess& jvm, const SessionParams& params, std::string_view engine,
             Profile& out) {
  if (auto cause = safemode_disabled(params)) {
    out.error_frame = skip_frame("disabled due to " + *cause);
    return true;
  }
  if (!params.java_version_check) return false;
  std::string why = unsupported_jvm(jvm, engine);
  if (why.empty()) return false;
  out.error_frame = skip_frame("profiling this JVM is not supported");
  out.warnings.push_back("JVM " + std::to_string(jvm.pid) + " is not profiled: " + why +
                         " (--java-no-version-check to profile it anyway)");
  return true;
}

Profile failed(const JvmProcess& jvm, std::string_view adapter, const std::string& reason) {
  Profile p;
  p.error_frame = error_frame(reason);
  p.warnings.push_back("cannot profile JVM " + std::to_string(jvm.pid) + " with " +
                       std::string(adapter) + ": " + reason);
  return p;
}

}  // namespace gp::runtime::java
