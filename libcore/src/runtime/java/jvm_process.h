#pragma once
// What the Java adapters need to know about a target JVM before attaching to it: who runs it
// (the attach mechanism answers only its own user), where its JDK lives, whether it is still
// the same process (pid reuse), and whether attaching is allowed at all.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gp/util/result.h"
#include "tool_runner.h"

namespace gp::runtime::java {

struct JvmProcess {
  pid_t pid = 0;
  uint64_t start_ticks = 0;      // /proc/PID/stat starttime: tells a reused pid apart
  Credentials owner;             // effective uid/gid of the JVM
  pid_t ns_pid = 0;              // pid inside its own pid namespace (attach file names use it)
  std::string exe;               // /proc/PID/exe as the JVM's mount namespace sees it
  std::string java_home;         // exe without "/bin/java" ("" when exe is not .../bin/java*)
  bool same_mount_ns = false;    // paths in the JVM's namespace are valid here too
  bool maps_libjvm = false;      // libjvm.so is mapped: a HotSpot-style JVM (jcmd sends SIGQUIT!)
  bool catches_sigquit = false;  // SigCgt has SIGQUIT: the JVM's signal handlers are installed
  std::vector<std::string> cmdline;
  std::string cwd;  // /proc/PID/cwd as its mount namespace sees it (hs_err files go there)
};

// Reads /proc/PID/{stat,status,exe,maps,cmdline,ns/mnt}. Error (containing "process exited")
// when the process is gone.
Result<JvmProcess> inspect_jvm(pid_t pid, const std::string& proc_root = "/proc");

// The process still runs and is the one inspected (same start time), not a zombie.
bool still_running(const JvmProcess& jvm, const std::string& proc_root = "/proc");

// -XX:+DisableAttachMechanism on the command line (the last setting wins, as in HotSpot).
bool attach_disabled(const std::vector<std::string>& cmdline);

// The JDK's feature version (8, 11, 17, ...) from JAVA_VERSION in the `release` file of the JVM's
// home as its mount namespace sees it (<home>/release, or <home>/../release for a JDK 8 jre/).
// 0 when unknown.
int jdk_feature_version(const JvmProcess& jvm, const std::string& proc_root = "/proc");

// JAVA_VERSION="1.8.0_392" → 8, "17.0.15" → 17, "25" → 25; 0 when the text has no such line.
int parse_release_version(const std::string& release_text);

// JAVA_VERSION of a JDK's `release` text as {feature, update}: "1.8.0_392" → {8, 392},
// "17.0.15" → {17, 15}, "25" → {25, 0}; {0, 0} when absent.
std::pair<int, int> parse_release_java_version(const std::string& release_text);

// jdk_feature_version's JDK as {feature, update} ({0, 0} when unknown).
std::pair<int, int> jdk_version(const JvmProcess& jvm, const std::string& proc_root = "/proc");

// Paths, valid in gp's mount namespace, where the JDK tool `name` ("jcmd", "jfr") may be,
// best first: the JVM's own JDK (when it shares gp's mount namespace; also <home>/../bin for a
// JDK 8 jre/), then PATH. Only existing executables are returned.
std::vector<std::string> jdk_tool_candidates(const JvmProcess& jvm, const std::string& name);

}  // namespace gp::runtime::java
