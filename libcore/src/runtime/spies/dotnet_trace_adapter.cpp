// .NET: dotnet-trace, run per process as gProfiler runs it (gprofiler.md §5.7,
// gprofiler/profilers/dotnet.py):
//   dotnet-trace collect --format speedscope --process-id NSPID --profile cpu-sampling
//                        --duration H:MM:SS --output OUT
// with TMPDIR=/proc/PID/root/tmp (dotnet-trace finds the runtime's diagnostics socket in the
// target's mount namespace) and DOTNET_ROOT, a timeout of SECONDS + 60, and no frequency (the
// runtime samples at its own rate). dotnet-trace writes OUT.speedscope.json; its evented
// profiles become samples at the session frequency, frames of kind dotnet (fold adds "_[net]").
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gp/runtime/adapters.h"
#include "runtime/spies/spy_run.h"

namespace gp::runtime {
namespace {

constexpr std::chrono::seconds kDotnetTraceExtraTime{60};  // DotnetProfiler._EXTRA_TIMEOUT
constexpr int64_t kMaxSeconds = 24 * 3600 - 1;  // "23:59:59": gProfiler refuses a day or more

// Python's str(timedelta(seconds=s)) for s < 1 day: "0:01:00", as gProfiler passes it.
std::string duration_text(int64_t s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

// The pid inside the target's own pid namespace (last NSpid entry): dotnet-trace connects to
// dotnet-diagnostic-<pid>-* under the target's /tmp, named with that pid.
pid_t namespace_pid(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("NSpid:")) continue;
    size_t last = line.find_last_of(" \t");
    if (last == std::string::npos) break;
    return static_cast<pid_t>(std::atoi(line.c_str() + last + 1));
  }
  return pid;  // kernels before 4.1 have no NSpid: no pid namespaces to translate
}

class DotnetTraceAdapter final : public Adapter {
 public:
  DotnetTraceAdapter()
      : tool_(spies::find_tool("dotnet-trace",
                               {"/root/.dotnet/tools", "/usr/local/bin", "/usr/share/dotnet/tools",
                                "/opt/dotnet/tools", "/opt/gprofiler/dotnet/tools"})) {}

  std::string_view name() const override { return "dotnet-trace"; }
  Runtime runtime() const override { return Runtime::dotnet; }
  std::string unavailable_reason() const override {
    return tool_.unavailable_reason("dotnet-trace");
  }

  Profile profile(const Target& target, const SessionParams& params, std::stop_token stop) override;

 private:
  // gProfiler: two levels up from dotnet-trace (its bundled runtime); a DOTNET_ROOT the user
  // set wins, as dotnet's own tools honour it.
  std::string dotnet_root() const {
    if (const char* env = std::getenv("DOTNET_ROOT"); env != nullptr && *env != '\0') return env;
    return std::filesystem::path(tool_.path).parent_path().parent_path().string();
  }

  spies::ToolSearch tool_;
};

Profile DotnetTraceAdapter::profile(const Target& target, const SessionParams& params,
                                    std::stop_token stop) {
  Profile p;
  if (tool_.path.empty()) {
    p.error_frame = skip_frame(unavailable_reason());
    return p;
  }
  // gProfiler refuses sessions over a day; gp's open-ended sessions (no -d) trace for up to a
  // day and end dotnet-trace with SIGINT when stopped, which still writes the trace.
  int64_t seconds = std::min(spies::whole_seconds(params.duration), kMaxSeconds);
  std::string base =
      params.work_dir + "/dotnet-trace-" + spies::random_tag() + "-" + std::to_string(target.pid);
  spies::SpyRun run;
  run.tool = "dotnet-trace";
  run.output_path = base + ".speedscope.json";
  run.options.argv = {tool_.path,     "collect",
                      "--format",     "speedscope",
                      "--process-id", std::to_string(namespace_pid(target.pid)),
                      "--profile",    "cpu-sampling",
                      "--duration",   duration_text(seconds),
                      "--output",     base};
  run.options.extra_env = {"TMPDIR=/proc/" + std::to_string(target.pid) + "/root/tmp",
                           "DOTNET_ROOT=" + dotnet_root()};
  run.options.timeout = std::chrono::seconds(seconds) + kDotnetTraceExtraTime;
  run.options.stop_signal = SIGINT;  // dotnet-trace ends the trace and converts it on Ctrl-C
  auto text = spies::run_spy(run, target, stop, p);
  std::error_code ignored;
  std::filesystem::remove(base, ignored);  // the .nettrace it converted from, if kept
  std::filesystem::remove(base + ".nettrace", ignored);
  if (!text) return p;
  if (text->empty()) return p;
  spies::SpyOutput parsed = spies::parse_speedscope(*text, params.frequency_hz);
  spies::report_problems("dotnet-trace", parsed, p);
  p.stacks = std::move(parsed.stacks);
  return p;
}

}  // namespace

std::unique_ptr<Adapter> make_dotnet_trace_adapter() {
  return std::make_unique<DotnetTraceAdapter>();
}

}  // namespace gp::runtime
