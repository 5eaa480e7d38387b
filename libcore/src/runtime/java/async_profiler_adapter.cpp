// Java through async-profiler's `asprof` (or the older `profiler.sh`) when one is on PATH, with
// the options gProfiler gives it (gprofiler.md §5.2): CPU samples (`-e cpu`) every 1e9/freq ns,
// collapsed output with `ann` annotations and signatures, a `timeout` so the agent stops by
// itself should gp die, and the output file in a directory the JVM can write.
//
//   asprof start -e cpu -i <ns> -a -g -t -o collapsed --timeout <s> -f <file> [-F <features>]
//                [<--java-async-profiler-args>] <pid>
//   asprof stop -a -g -t -o collapsed -f <file> <pid>
//
// (gProfiler drives its own asprof build with jattach-style `load <lib> true start,...`;
// a stock asprof takes the same settings as the documented options above.) `-t` adds a thread
// frame "[name tid=N]" that gp turns into the stack's thread rather than a frame.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "ap_collapsed.h"
#include "gp/runtime/adapters.h"
#include "jvm_session.h"
#include "safemode.h"
#include "target_dir.h"

namespace gp::runtime {
namespace java {
namespace {

using namespace std::chrono_literals;

constexpr auto kAgentSlack = 30s;  // gProfiler's timeout=<duration+30>
constexpr uint64_t kMaxOutputBytes = 512ull << 20;

std::string find_asprof() {
  std::string exe = find_program("asprof");
  return exe.empty() ? find_program("profiler.sh") : exe;
}

// gProfiler's auto mode: cpu (perf events) when they can be opened here, else itimer.
std::string resolve_event(const std::string& event) {
  if (event != "auto") return event;
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.disabled = 1;
  long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return "itimer";
  ::close(static_cast<int>(fd));
  return "cpu";
}

std::vector<std::string> output_options(const std::string& file) {
  return {"-a", "-g", "-t", "-o", "collapsed", "-f", file};
}

class Asprof {
 public:
  // `timeout`: gProfiler's --java-jattach-timeout, the limit of each asprof command.
  Asprof(std::string exe, pid_t pid, std::chrono::seconds timeout)
      : exe_(std::move(exe)), pid_(pid), timeout_(timeout) {}
  Status run(const std::string& action, const std::vector<std::string>& options,
             std::stop_token stop, std::string* problem_text = nullptr) {
    ToolCommand spec;
    spec.argv = {exe_, action};
    spec.argv.insert(spec.argv.end(), options.begin(), options.end());
    spec.argv.push_back(std::to_string(pid_));
    spec.timeout = timeout_;
    auto r = run_tool(spec, stop);
    if (!r) return r.error();
    if (r->exit_code == 0) return ok_status();
    if (problem_text != nullptr) *problem_text = r->out + r->err;
    return make_error("asprof " + action + ": " + describe_failure(spec, *r));
  }

 private:
  std::string exe_;
  pid_t pid_;
  std::chrono::seconds timeout_;
};

std::vector<std::string> start_options(const SessionParams& params, const std::string& file) {
  int hz = std::max(params.frequency_hz, 1);
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(params.duration + kAgentSlack);
  const AsyncProfilerOptions& ap = params.async_profiler;
  std::vector<std::string> opts = {"-e", resolve_event(ap.event), "-i",
                                   std::to_string(1000000000LL / hz)};
  if (params.alloc_interval > 0) {
    // gProfiler's allocation mode (event=alloc,alloc=<bytes>); --total: counts in bytes, as
    // gp's JFR allocation profiles have them.
    opts = {"-e", "alloc", "--alloc", std::to_string(params.alloc_interval), "--total"};
  }
  auto out = output_options(file);
  opts.insert(opts.end(), out.begin(), out.end());
  opts.insert(opts.end(), {"--timeout", std::to_string(secs.count())});
  if (!ap.features.empty()) {
    std::string list;
    for (const auto& f : ap.features) list += (list.empty() ? "" : ",") + f;
    opts.insert(opts.end(), {"-F", list});
  }
  opts.insert(opts.end(), ap.extra.begin(), ap.extra.end());
  return opts;
}

// Start; when a profiler is already running in the JVM, stop it and start again once, as
// gProfiler does.
Status start(Asprof& asprof, const SessionParams& params, const std::string& file,
             std::stop_token stop) {
  std::string text;
  Status st = asprof.run("start", start_options(params, file), stop, &text);
  if (st || text.find("already started") == std::string::npos) return st;
  (void)asprof.run("stop", {}, {});
  return asprof.run("start", start_options(params, file), stop);
}

class AsyncProfilerAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "async-profiler"; }
  Runtime runtime() const override { return Runtime::java; }
  std::string unavailable_reason() const override {
    if (!find_asprof().empty()) return {};
    return "async-profiler is not installed (no asprof or profiler.sh on PATH)";
  }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile out;
    auto jvm = admit_jvm(target, out);
    if (!jvm) return out;
    if (refused(*jvm, params, "ap", out)) return out;
    // Attaching to a JVM that is writing its crash log would only wait on it.
    if (gone_or_crashing(*jvm, stop)) return went_down(*jvm, params);
    remember_profiled_jvm(params, jvm->pid);  // gProfiler's _profiled_pids
    std::string exe = find_asprof();
    if (exe.empty()) return failed(*jvm, name(), unavailable_reason());
    auto dir = TargetDir::create("/proc/" + std::to_string(jvm->pid) + "/root",
                                 "ap-" + std::to_string(jvm->pid), jvm->owner);
    if (!dir) return failed(*jvm, name(), dir.error().message);
    // asprof switches to the JVM's user and namespaces itself (jattach), so it runs as gp.
    Asprof asprof(exe, jvm->pid, params.attach_timeout);
    std::string file = dir->target_path("collapsed.txt");
    Status started = start(asprof, params, file, stop);
    if (!started) {
      (void)asprof.run("stop", {}, {});  // it may have started before asprof timed out
      if (gone_or_crashing(*jvm, stop)) return went_down(*jvm, params);
      if (stop.stop_requested()) return out;
      return failed(*jvm, name(), started.error().message);
    }
    // The full duration from the moment samples are taken, as gProfiler waits after its start
    // (attaching takes seconds on a busy host; counting it would leave a short session empty).
    SessionEnd end = wait_session(*jvm, std::chrono::steady_clock::now() + params.duration, stop);
    Status stopped = asprof.run("stop", output_options(file), {});
    if (end == SessionEnd::exited || gone_or_crashing(*jvm, stop)) {
      return went_down(*jvm, params);
    }
    if (!stopped) return failed(*jvm, name(), stopped.error().message);
    return collect(*jvm, *dir, params, std::move(out));
  }

 private:
  Profile collect(const JvmProcess& jvm, TargetDir& dir, const SessionParams& params, Profile out) {
    std::string copy =
        params.work_dir + "/async-profiler-" + std::to_string(jvm.pid) + ".collapsed";
    if (auto st = dir.copy_out("collapsed.txt", copy, kMaxOutputBytes); !st) {
      return failed(jvm, name(), "no output from asprof stop: " + st.error().message);
    }
    std::ifstream in(copy, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    unlink(copy.c_str());
    StackTable table;
    CollapsedStats stats = read_ap_collapsed(text.str(), table);
    if (stats.bad_lines > 0) {
      out.warnings.push_back(std::to_string(stats.bad_lines) +
                             " lines of async-profiler's output for JVM " +
                             std::to_string(jvm.pid) + " were not '<frames> <count>' (skipped)");
    }
    out.stacks = table.take();
    return out;
  }
};

}  // namespace
}  // namespace java

std::unique_ptr<Adapter> make_async_profiler_adapter() {
  return std::make_unique<java::AsyncProfilerAdapter>();
}

}  // namespace gp::runtime
