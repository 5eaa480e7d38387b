// Ruby: rbspy, run per process as gProfiler runs it (gprofiler.md §5.5,
// gprofiler/profilers/ruby.py):
//   rbspy record --silent -r HZ -d SECONDS --nonblocking --oncpu --format=collapsed
//         --file OUT --raw-file /dev/null -p PID
// with HZ clamped to 100 and a timeout of SECONDS + 10. Its collapsed file becomes stacks of
// ruby frames ("NAME - PATH:LINE", fold adds "_[rb]").
#include <algorithm>

#include "gp/runtime/adapters.h"
#include "runtime/spies/spy_run.h"

namespace gp::runtime {
namespace {

using spies::SpyOutput;

constexpr int kRbspyMaxFrequency = 100;              // gProfiler's RbSpyProfiler.MAX_FREQUENCY
constexpr std::chrono::seconds kRbspyExtraTime{10};  // RbSpyProfiler._EXTRA_TIMEOUT

class RbspyAdapter final : public Adapter {
 public:
  RbspyAdapter()
      : tool_(spies::find_tool("rbspy", {"/root/.cargo/bin", "/usr/local/bin", "/opt/rbspy/bin",
                                         "/opt/gprofiler/ruby"})) {}

  std::string_view name() const override { return "rbspy"; }
  Runtime runtime() const override { return Runtime::ruby; }
  std::string unavailable_reason() const override { return tool_.unavailable_reason("rbspy"); }

  Profile profile(const Target& target, const SessionParams& params, std::stop_token stop) override;

 private:
  std::vector<std::string> command(pid_t pid, const std::string& out, int64_t seconds,
                                   int hz) const {
    return {tool_.path,
            "record",
            "--silent",
            "-r",
            std::to_string(hz),
            "-d",
            std::to_string(seconds),
            "--nonblocking",
            "--oncpu",
            "--format=collapsed",
            "--file",
            out,
            "--raw-file",
            "/dev/null",
            "-p",
            std::to_string(pid)};
  }

  spies::ToolSearch tool_;
};

Profile RbspyAdapter::profile(const Target& target, const SessionParams& params,
                              std::stop_token stop) {
  Profile p;
  if (tool_.path.empty()) {
    p.error_frame = skip_frame(unavailable_reason());
    return p;
  }
  int64_t seconds = spies::whole_seconds(params.duration);
  int hz = std::clamp(params.frequency_hz, 1, kRbspyMaxFrequency);
  spies::SpyRun run;
  run.tool = "rbspy";
  run.output_path =
      params.work_dir + "/rbspy." + spies::random_tag() + "." + std::to_string(target.pid) + ".col";
  run.options.argv = command(target.pid, run.output_path, seconds, hz);
  run.options.timeout = std::chrono::seconds(seconds) + kRbspyExtraTime;
  run.options.stop_signal = SIGINT;  // rbspy writes its output file on Ctrl-C
  auto text = spies::run_spy(run, target, stop, p);
  if (!text) return p;
  SpyOutput parsed = spies::parse_rbspy_collapsed(*text);
  spies::report_problems("rbspy", parsed, p);
  p.stacks = std::move(parsed.stacks);
  return p;
}

}  // namespace

std::unique_ptr<Adapter> make_rbspy_adapter() { return std::make_unique<RbspyAdapter>(); }

}  // namespace gp::runtime
