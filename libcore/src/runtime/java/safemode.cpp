// gProfiler's Java safemode and version check (see safemode.h).
#include "safemode.h"

#include "gp/runtime/java_safemode.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <sstream>

namespace gp::runtime::java {
namespace {

// Java profiling's off-switch of a run without a state directory.
std::mutex g_mutex;
std::optional<std::string> g_disabled;

bool read_file(const std::string& path, std::string& out, size_t limit = 64u << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  // Chunk by chunk: a buffer of `limit` bytes would be 64 MiB written for a 4-KiB state file.
  out.clear();
  char chunk[1 << 16];
  while (out.size() < limit) {
    in.read(chunk, sizeof chunk);
    auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    out.append(chunk, std::min(got, limit - out.size()));
  }
  return true;
}

bool write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!(out << text)) return false;
  }
  return rename(tmp.c_str(), path.c_str()) == 0;
}

std::string trim(std::string s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

bool enabled(const SessionParams& params, std::string_view cause) {
  return std::find(params.java_safemode.begin(), params.java_safemode.end(), cause) !=
         params.java_safemode.end();
}

// The last -XX:[+-]NAME of the command line: +1, -1, or 0 when not given.
int last_bool_flag(const std::vector<std::string>& cmdline, std::string_view name) {
  int value = 0;
  for (const auto& arg : cmdline) {
    if (arg.size() == name.size() + 5 && arg.compare(0, 4, "-XX:") == 0 &&
        arg.compare(5, std::string::npos, name) == 0 && (arg[4] == '+' || arg[4] == '-')) {
      value = arg[4] == '+' ? 1 : -1;
    }
  }
  return value;
}

// The text after `prefix` on the line that starts with it ("" when no line does).
std::string line_value(const std::string& text, std::string_view prefix) {
  for (size_t at = 0; (at = text.find(prefix, at)) != std::string::npos; at += prefix.size()) {
    if (at != 0 && text[at - 1] != '\n') continue;
    size_t b = at + prefix.size();
    return text.substr(b, text.find('\n', b) - b);
  }
  return {};
}

// The lines after the line that starts with `header`, up to the next empty line.
std::string block_after(const std::string& text, std::string_view header) {
  for (size_t at = 0; (at = text.find(header, at)) != std::string::npos; at += header.size()) {
    if (at != 0 && text[at - 1] != '\n') continue;
    size_t b = text.find('\n', at);
    if (b == std::string::npos) return {};
    ++b;
    size_t e = text.find("\n\n", b);
    return e == std::string::npos ? std::string() : text.substr(b, e - b);
  }
  return {};
}

}  // namespace

std::optional<std::string> safemode_disabled(const SessionParams& params) {
  if (!params.java_safemode_state.empty()) {
    std::string cause;
    if (read_file(params.java_safemode_state + "/disabled", cause, 4096) && !trim(cause).empty())
      return trim(cause);
    return std::nullopt;
  }
  std::lock_guard lock(g_mutex);
  return g_disabled;
}

void safemode_disable(const SessionParams& params, std::string_view cause, Profile& out) {
  if (!enabled(params, cause)) return;
  std::lock_guard lock(g_mutex);
  if (!params.java_safemode_state.empty()) {
    std::string old;
    if (read_file(params.java_safemode_state + "/disabled", old, 4096) && !trim(old).empty())
      return;
    if (!write_file(params.java_safemode_state + "/disabled", std::string(cause) + "\n")) {
      out.warnings.push_back("cannot write the Java safemode state in " +
                             params.java_safemode_state);
    }
  } else if (g_disabled) {
    return;
  } else {
    g_disabled = std::string(cause);
  }
  out.warnings.push_back(
      "Java profiling has been disabled, will avoid profiling any new java processes (safemode "
      "cause: " +
      std::string(cause) + ")");
}

std::string profiled_jvm_marker(const std::string& state_dir, int pid) {
  return state_dir + "/profiled/" + std::to_string(pid);
}

void remember_profiled_jvm(const SessionParams& params, int pid) {
  if (params.java_safemode_state.empty()) return;
  ::mkdir((params.java_safemode_state + "/profiled").c_str(), 0700);
  std::ofstream(profiled_jvm_marker(params.java_safemode_state, pid), std::ios::trunc);
}

std::string unsupported_jvm(const JvmProcess& jvm, std::string_view engine,
                            const std::string& proc_root) {
  auto [feature, update] = jdk_version(jvm, proc_root);
  std::string named = feature == 0 ? std::string()
                                   : " (its JDK's release file says " + std::to_string(feature) +
                                         (feature <= 8 ? "u" + std::to_string(update) : "") + ")";
  // gProfiler's simple check: HotSpot newer than 6 (async-profiler's AsyncGetCallTrace).
  if (feature != 0 && feature <= 6) return "a JDK older than 7" + named;
  if (engine != "jfr") return {};
  if (feature != 0 && (feature < 8 || (feature == 8 && update < 262)))
    return "JFR needs JDK 8u262 or 11+" + named;
  if (last_bool_flag(jvm.cmdline, "FlightRecorder") < 0)
    return "Flight Recorder is off (-XX:-FlightRecorder)";
  return {};
}

std::string find_hotspot_error_file(const JvmProcess& jvm) {
  std::vector<std::string> candidates;
  for (const auto& arg : jvm.cmdline) {
    if (arg.rfind("-XX:ErrorFile=", 0) == 0) {
      std::string path = arg.substr(14);
      for (size_t at; (at = path.find("%p")) != std::string::npos;)
        path.replace(at, 2, std::to_string(jvm.ns_pid));
      candidates.push_back(path);
      break;
    }
  }
  std::string name = "hs_err_pid" + std::to_string(jvm.ns_pid) + ".log";
  candidates.push_back(name);
  candidates.push_back("/tmp/" + name);
  // The JVM's paths as gp sees them: directly when it shares gp's mount namespace, else through
  // its /proc/PID/root (gone with its last process).
  std::string root = jvm.same_mount_ns ? "" : "/proc/" + std::to_string(jvm.pid) + "/root";
  for (auto path : candidates) {
    if (path.empty()) continue;
    if (path[0] != '/') {
      if (jvm.cwd.empty()) continue;
      path = jvm.cwd + "/" + path;
    }
    struct stat st {};
    if (stat((root + path).c_str(), &st) == 0 && S_ISREG(st.st_mode)) return root + path;
  }
  return {};
}

std::string hotspot_error_excerpt(const std::string& contents) {
  std::string frame;
  const std::string marker = "# Problematic frame:\n# ";
  size_t at = contents.find(marker);
  if (at != std::string::npos) {
    size_t b = at + marker.size();
    size_t e = contents.find("\n#\n", b);
    if (e != std::string::npos) frame = contents.substr(b, e - b);
  }
  return "VM info: " + line_value(contents, "vm_info: ") + "\nsiginfo: " +
         line_value(contents, "siginfo: ") + "\nProblematic frame: " + frame +
         "\nnative frames:\n" + block_after(contents, "Native frames:") + "\ncontainer info:\n" +
         block_after(contents, "container (cgroup) information:");
}

void check_hotspot_error(const JvmProcess& jvm, const SessionParams& params, Profile& out) {
  std::string path = find_hotspot_error_file(jvm);
  if (path.empty()) return;
  std::string contents;
  if (!read_file(path, contents)) return;
  std::string report = params.java_full_hserr ? contents : hotspot_error_excerpt(contents);
  while (!report.empty() && report.back() == '\n') report.pop_back();
  std::string title = "Found HotSpot error log of JVM " + std::to_string(jvm.pid) + ": " + path;
  if (!params.java_safemode_state.empty()) {
    // The caller logs the report (many lines) in its own log.
    write_file(params.java_safemode_state + "/hserr-" + std::to_string(jvm.pid) + ".log",
               title + "\n" + report + "\n");
    out.warnings.push_back(title);
  } else {
    out.warnings.push_back(title + "\n" + report);
  }
  safemode_disable(params, "hserr", out);
}

}  // namespace gp::runtime::java

namespace gp::runtime {

std::vector<std::string> java_safemode_causes(std::string_view value,
                                              std::vector<std::string>* unknown) {
  std::vector<std::string> causes;
  if (value == "all") return {std::begin(kJavaSafemodeCauses), std::end(kJavaSafemodeCauses)};
  if (value.empty() || value == "\"\"") return causes;
  for (size_t start = 0;;) {
    size_t comma = value.find(',', start);
    std::string_view item = value.substr(start, comma - start);
    if (std::find(std::begin(kJavaSafemodeCauses), std::end(kJavaSafemodeCauses), item) !=
        std::end(kJavaSafemodeCauses))
      causes.emplace_back(item);
    else if (unknown)
      unknown->emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return causes;
}

}  // namespace gp::runtime
