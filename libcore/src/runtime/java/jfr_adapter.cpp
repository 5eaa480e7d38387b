// Java through JDK Flight Recorder: every JDK (8u262+, 11+) has it, nothing to install.
//
// Flow per JVM: jcmd PID JFR.start (a private recording: jdk.ExecutionSample only at the
// session's frequency, or in allocation mode JFR's allocation events; written to a directory in
// the JVM's /tmp, with a duration so the JVM ends it by itself should gp die) → wait → jcmd PID
// JFR.stop (writes the file) → copy it to gp's work_dir → `jfr print --json` → stacks. jcmd
// comes from the JVM's own JDK when it shares gp's mount namespace, else from PATH, and runs as
// the JVM's user.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <future>

#include "gp/runtime/adapters.h"
#include "jfr_samples.h"
#include "jvm_flags.h"
#include "jvm_session.h"
#include "safemode.h"
#include "target_dir.h"

namespace gp::runtime {
namespace java {
namespace {

using namespace std::chrono_literals;

constexpr auto kJfrPrintTimeout = 180s;
constexpr auto kRecordingSlack = 60s;  // JFR ends the recording itself this long after the session
constexpr uint64_t kMaxRecordingBytes = 1ull << 30;
constexpr int kMinPeriodMs = 10;  // JFR's shortest execution sample period

// JFR's sampling period for `hz`, clamped to its 10 ms floor (a warning above 100 Hz).
int period_ms(int hz, std::vector<std::string>& warnings) {
  hz = std::max(hz, 1);
  int ms = static_cast<int>(std::lround(1000.0 / hz));
  if (ms < kMinPeriodMs) {
    warnings.push_back("JFR samples at most every 10 ms: using 100 Hz instead of " +
                       std::to_string(hz) + " Hz");
    ms = kMinPeriodMs;
  }
  return ms;
}

// One <event> of a .jfc settings file.
std::string jfc_event(std::string_view name,
                      const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string out = "  <event name=\"" + std::string(name) + "\">\n";
  for (const auto& [key, value] : settings)
    out += "    <setting name=\"" + key + "\">" + value + "</setting>\n";
  return out + "  </event>\n";
}

std::string jfc(const std::string& events) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<configuration version=\"2.0\" label=\"gp-runtime\" description=\"Samples for "
         "gp-runtime\" provider=\"gp\">\n" +
         events + "</configuration>\n";
}

std::string cpu_settings(int period) {
  return jfc(jfc_event("jdk.ExecutionSample",
                       {{"enabled", "true"}, {"period", std::to_string(period) + " ms"}}));
}

constexpr std::string_view kAllocationEvents =
    "jdk.ObjectAllocationSample,jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB";

// JFR throttles jdk.ObjectAllocationSample in samples per second, not per byte: the interval
// becomes the rate that gives one sample per `interval` bytes at 64 GiB/s (32768/s at
// gProfiler's 2mb). Samples the throttle drops lose the bytes they stood for (measured: 5 to
// 44 % of the bytes kept at 1024/s with small TLABs on a loaded host), so the rate is high.
uint64_t allocation_throttle(uint64_t interval) {
  constexpr uint64_t kReferenceRate = 1ull << 36, kMaxRate = 100000;
  return std::clamp<uint64_t>(kReferenceRate / std::max<uint64_t>(interval, 1), 1, kMaxRate);
}

// JDK 16+ samples allocations (jdk.ObjectAllocationSample, throttled); older JDKs have an event
// per new TLAB and per allocation outside one. Unknown version: both, the reader keeps the
// samples when there are any.
std::string allocation_settings(uint64_t interval, int jdk) {
  std::string events;
  if (jdk == 0 || jdk >= 16) {
    events += jfc_event("jdk.ObjectAllocationSample",
                        {{"enabled", "true"},
                         {"throttle", std::to_string(allocation_throttle(interval)) + "/s"},
                         {"stackTrace", "true"}});
  }
  if (jdk < 16) {
    for (const char* name : {"jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB"})
      events += jfc_event(name, {{"enabled", "true"}, {"stackTrace", "true"}});
  }
  return jfc(events);
}

// jcmd prints "PID:" and the command's answer; attach failures are a Java exception (exit 1),
// command failures a plain sentence (exit 0). The sentence that explains it.
std::string jcmd_problem(const ToolCommand& spec, const RunResult& r) {
  std::string text = r.err + "\n" + r.out;
  size_t at = text.find("Exception: ");
  if (at != std::string::npos) {
    size_t end = text.find('\n', at);
    return text.substr(at + 11, end == std::string::npos ? std::string::npos : end - at - 11);
  }
  if (r.exit_code == 0 && !r.timed_out && !r.stopped) {
    size_t first = r.out.find('\n');
    std::string answer = first == std::string::npos ? r.out : r.out.substr(first + 1);
    size_t b = answer.find_first_not_of(" \r\n\t");
    size_t e = answer.find('\n', b == std::string::npos ? 0 : b);
    if (b != std::string::npos) return answer.substr(b, e == std::string::npos ? e : e - b);
  }
  return describe_failure(spec, r);
}

class JfrSession {
 public:
  JfrSession(const JvmProcess& jvm, std::string jcmd, std::optional<Credentials> as_user,
             std::chrono::seconds timeout)
      : jvm_(jvm), jcmd_(std::move(jcmd)), as_user_(as_user), timeout_(timeout) {
    name_ = "gp-runtime-" + std::to_string(getpid()) + "-" + std::to_string(jvm.pid);
  }
  // jcmd's standard output, or its reason on failure; `expect` is in the text of a success.
  Result<std::string> output(const std::vector<std::string>& command, std::string_view expect,
                             std::stop_token stop) {
    ToolCommand spec;
    spec.argv = {jcmd_, "-J-XX:-UsePerfData", std::to_string(jvm_.pid)};
    spec.argv.insert(spec.argv.end(), command.begin(), command.end());
    spec.timeout = timeout_;
    spec.as_user = as_user_;
    auto r = run_tool(spec, stop);
    if (!r) return r.error();
    if (r->exit_code == 0 && r->out.find(expect) != std::string::npos) return std::move(r->out);
    return make_error("jcmd " + command.front() + ": " + jcmd_problem(spec, *r));
  }
  Status jcmd(const std::vector<std::string>& command, std::string_view expect,
              std::stop_token stop) {
    auto r = output(command, expect, stop);
    return r ? ok_status() : Status(r.error());
  }
  Status start(const TargetDir& dir, std::chrono::milliseconds duration, std::stop_token stop) {
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(duration + kRecordingSlack);
    return jcmd({"JFR.start", "name=" + name_, "settings=" + dir.target_path("gp.jfc"),
                 "filename=" + dir.target_path("rec.jfr"),
                 "duration=" + std::to_string(secs.count()) + "s", "dumponexit=false"},
                "Started recording", stop);
  }
  // Never cut short by the session's stop: a recording must not be left running.
  Status stop() { return jcmd({"JFR.stop", "name=" + name_}, "Stopped recording", {}); }

 private:
  const JvmProcess& jvm_;
  std::string jcmd_;
  std::optional<Credentials> as_user_;
  std::chrono::seconds timeout_;  // gProfiler's --java-jattach-timeout
  std::string name_;
};

bool collects_jvm_flags(const std::string& selection) {
  return selection != "none" && !selection.empty();
}

// gProfiler's "jvm_flags" app metadata (--java-collect-jvm-flags): the flags of VM.flags -all
// (`text`, jcmd's output) as the selection picks them, or "error <why>" when jcmd failed, as
// gProfiler's.
void add_jvm_flags(const std::string& selection, std::future<Result<std::string>>& text,
                   Profile& out) {
  json::Value flags = json::Value::array();
  std::vector<std::string> missing;
  if (text.valid()) {
    auto got = text.get();
    flags = got ? collect_jvm_flags(parse_jvm_flags(*got), selection, &missing)
                : json::Value::from_string("error " + got.error().message);
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    out.warnings.push_back("JVM flags not found: " + names);
  }
  json::Value meta = json::Value::object();
  meta.set("jvm_flags", std::move(flags));
  out.app_metadata_json = json::dump(meta);
}

// `jfr print --json` of the recording into stacks.
Status read_recording(const JvmProcess& jvm, const std::string& recording,
                      const std::string& json_path, bool allocation, const JfrFrameStyle& style,
                      Profile& out) {
  auto tools = jdk_tool_candidates(jvm, "jfr");
  if (tools.empty())
    return make_error("the JDK's jfr tool was not found (not in the JVM's JDK, not on PATH)");
  ToolCommand spec;
  spec.argv = {tools.front(),   "-J-XX:-UsePerfData",
               "print",         "--json",
               "--events",      allocation ? std::string(kAllocationEvents) : "jdk.ExecutionSample",
               "--stack-depth", "2048",
               recording};
  spec.timeout = kJfrPrintTimeout;
  spec.stdout_path = json_path;
  auto r = run_tool(spec, {});
  if (!r) return r.error();
  if (r->exit_code != 0) return make_error("jfr print: " + describe_failure(spec, *r));
  std::ifstream in(json_path, std::ios::binary);
  StackTable table;
  auto stats =
      read_jfr_json(in, table, allocation ? JfrEvents::allocation : JfrEvents::execution, style);
  if (!stats) return make_error("jfr print: " + stats.error().message);
  if (stats->truncated > 0) {
    out.warnings.push_back(std::to_string(stats->truncated) + " of " +
                           std::to_string(stats->events) + " JFR stacks of JVM " +
                           std::to_string(jvm.pid) +
                           " were cut at the JVM's stack depth (JFR keeps 64 frames by default)");
  }
  out.stacks = table.take();
  return ok_status();
}

class JfrAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "jfr"; }
  Runtime runtime() const override { return Runtime::java; }
  // JFR comes with the target's own JDK: whether jcmd exists is known per process.
  std::string unavailable_reason() const override { return {}; }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile out;
    auto jvm = admit_jvm(target, out);
    if (!jvm) return out;
    if (refused(*jvm, params, "jfr", out)) return out;
    // Attaching to a JVM that is writing its crash log would only wait on it.
    if (gone_or_crashing(*jvm, stop)) return went_down(*jvm, params);
    remember_profiled_jvm(params, jvm->pid);  // gProfiler's _profiled_pids
    std::string why;
    auto identity = attach_identity(*jvm, why);
    if (!identity) return failed(*jvm, name(), why);
    auto jcmds = jdk_tool_candidates(*jvm, "jcmd");
    if (jcmds.empty()) {
      return failed(
          *jvm, name(),
          "jcmd was not found (not in the JVM's JDK '" + jvm->java_home + "', not on PATH)");
    }
    auto dir = TargetDir::create("/proc/" + std::to_string(jvm->pid) + "/root",
                                 "jfr-" + std::to_string(jvm->pid), jvm->owner);
    if (!dir) return failed(*jvm, name(), dir.error().message);
    std::string settings =
        params.alloc_interval > 0
            ? allocation_settings(params.alloc_interval, jdk_feature_version(*jvm))
            : cpu_settings(period_ms(params.frequency_hz, out.warnings));
    if (auto st = dir->write_file("gp.jfc", settings); !st) {
      return failed(*jvm, name(), st.error().message);
    }
    JfrSession session(*jvm, jcmds.front(), *identity, params.attach_timeout);
    Status started = session.start(*dir, params.duration, stop);
    if (!started) {
      (void)session.stop();  // the JVM may have started it before jcmd timed out or was stopped
      if (gone_or_crashing(*jvm, stop)) return went_down(*jvm, params);
      if (stop.stop_requested()) return out;
      return failed(*jvm, name(), started.error().message);
    }
    // The full duration from the moment samples are taken, as gProfiler waits after its start
    // (attaching takes seconds on a busy host; counting it would leave a short session empty).
    auto session_end = std::chrono::steady_clock::now() + params.duration;
    // The JVM's flags are read while JFR records (a jcmd of its own, not cut short by the
    // session's end; the future waits for it on every way out).
    std::future<Result<std::string>> flags;
    if (collects_jvm_flags(params.jvm_flags)) {
      flags = std::async(std::launch::async,
                         [&session] { return session.output({"VM.flags", "-all"}, "", {}); });
    }
    SessionEnd end = wait_session(*jvm, session_end, stop);
    Status stopped = session.stop();
    if (end == SessionEnd::exited || gone_or_crashing(*jvm, stop)) {
      return went_down(*jvm, params);
    }
    if (!stopped) return failed(*jvm, name(), stopped.error().message);
    add_jvm_flags(params.jvm_flags, flags, out);
    return collect(*jvm, *dir, params, std::move(out));
  }

 private:
  Profile collect(const JvmProcess& jvm, TargetDir& dir, const SessionParams& params, Profile out) {
    std::string base = params.work_dir + "/jfr-" + std::to_string(jvm.pid);
    if (auto st = dir.copy_out("rec.jfr", base + ".jfr", kMaxRecordingBytes); !st) {
      return failed(jvm, name(), "no recording from JFR.stop: " + st.error().message);
    }
    dir.remove("rec.jfr");
    JfrFrameStyle style;
    style.method_modifiers = params.method_modifiers;
    style.line_numbers = params.line_numbers;
    Status read =
        read_recording(jvm, base + ".jfr", base + ".json", params.alloc_interval > 0, style, out);
    unlink((base + ".jfr").c_str());
    unlink((base + ".json").c_str());
    if (!read) return failed(jvm, name(), read.error().message);
    return out;
  }
};

}  // namespace
}  // namespace java

std::unique_ptr<Adapter> make_jfr_adapter() { return std::make_unique<java::JfrAdapter>(); }

}  // namespace gp::runtime
