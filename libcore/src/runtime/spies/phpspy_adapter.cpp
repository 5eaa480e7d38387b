// PHP: phpspy (gprofiler.md §5.6, gprofiler/profilers/php.py).
//
// gProfiler runs one phpspy for the whole host, `-P <--php-proc-filter> -T 16`, and rotates its
// output with SIGUSR2 (a feature of Granulate's fork only), then keeps the "# pid = N" blocks
// of the processes it was asked about (#763). gp's driver gives each adapter one process, so
// gp runs phpspy on that process with the same options otherwise:
//   phpspy --verbose-fields=p -p PID -H HZ -b 16384 -i MILLISECONDS --output OUT
// HZ clamped to 999; --time-limit-ms ends the run, so upstream phpspy works too. The pid
// blocks are still checked: a block of another pid is dropped, as gProfiler does.
#include <algorithm>

#include "gp/runtime/adapters.h"
#include "runtime/spies/spy_run.h"

namespace gp::runtime {
namespace {

constexpr int kPhpspyMaxFrequency = 999;              // PHPSpyProfiler.MAX_FREQUENCY
constexpr int kBufferSize = 16384;                    // PHPSpyProfiler.BUFFER_SIZE
constexpr std::chrono::seconds kPhpspyStartWait{10};  // gProfiler's phpspy start wait
constexpr size_t kMaxOutput = 256u << 20;             // phpspy writes one block per sample

class PhpspyAdapter final : public Adapter {
 public:
  PhpspyAdapter()
      : tool_(spies::find_tool("phpspy", {"/usr/local/bin", "/opt/phpspy", "/opt/gprofiler/php"})) {
  }

  std::string_view name() const override { return "phpspy"; }
  Runtime runtime() const override { return Runtime::php; }
  std::string unavailable_reason() const override { return tool_.unavailable_reason("phpspy"); }

  Profile profile(const Target& target, const SessionParams& params, std::stop_token stop) override;

 private:
  std::vector<std::string> command(pid_t pid, const std::string& out, int64_t seconds,
                                   int hz) const {
    return {tool_.path, "--verbose-fields=p",
            "-p",       std::to_string(pid),
            "-H",       std::to_string(hz),
            "-b",       std::to_string(kBufferSize),
            "-i",       std::to_string(seconds * 1000),
            "--output", out};
  }

  spies::ToolSearch tool_;
};

void explain_pid_blocks(const spies::PhpspyOutput& parsed, pid_t pid, Profile& p) {
  if (parsed.other_pids > 0) {
    p.warnings.push_back("phpspy output: dropped " + std::to_string(parsed.other_pids) +
                         " traces of processes other than " + std::to_string(pid));
  }
  if (parsed.without_pid > 0) {
    p.warnings.push_back("phpspy output: " + std::to_string(parsed.without_pid) +
                         " traces had no '# pid' line (kept: phpspy traced only this process)");
  }
}

Profile PhpspyAdapter::profile(const Target& target, const SessionParams& params,
                               std::stop_token stop) {
  Profile p;
  if (tool_.path.empty()) {
    p.error_frame = skip_frame(unavailable_reason());
    return p;
  }
  int64_t seconds = spies::whole_seconds(params.duration);
  int hz = std::clamp(params.frequency_hz, 1, kPhpspyMaxFrequency);
  spies::SpyRun run;
  run.tool = "phpspy";
  run.max_output = kMaxOutput;
  run.output_path = params.work_dir + "/phpspy." + spies::random_tag() + "." +
                    std::to_string(target.pid) + ".col";
  run.options.argv = command(target.pid, run.output_path, seconds, hz);
  run.options.timeout = std::chrono::seconds(seconds) + kPhpspyStartWait;
  run.options.stop_signal = SIGINT;  // phpspy ends gracefully on SIGINT; output is line-buffered
  auto text = spies::run_spy(run, target, stop, p);
  if (!text) return p;
  spies::PhpspyOutput parsed = spies::parse_phpspy(*text, target.pid);
  spies::report_problems("phpspy", parsed, p);
  explain_pid_blocks(parsed, target.pid, p);
  p.stacks = std::move(parsed.stacks);
  return p;
}

}  // namespace

std::unique_ptr<Adapter> make_phpspy_adapter() { return std::make_unique<PhpspyAdapter>(); }

}  // namespace gp::runtime
