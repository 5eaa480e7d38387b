// The py-spy adapter: runs py-spy on one process the way gProfiler does (gprofiler.md §5.3)
// and converts its raw (collapsed) output.
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <random>
#include <sstream>

#include "gp/runtime/adapters.h"
#include "gp/runtime/subprocess.h"
#include "runtime/python/py_spy_output.h"

namespace gp::runtime {
namespace {

constexpr int kPySpyMaxFrequencyHz = 50;            // gProfiler's limit_frequency
constexpr std::chrono::seconds kTimeoutMargin{10};  // gProfiler: duration + 10 s

std::string random_letters(size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s;
  for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + rng() % 26);
  return s;
}

bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  auto nl = text.rfind('\n');
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

}  // namespace

std::vector<std::string> python::py_spy_command(const std::string& program, pid_t pid, int hz,
                                                std::chrono::milliseconds duration,
                                                const std::string& output) {
  auto seconds = std::max<int64_t>(1, (duration.count() + 999) / 1000);
  return {program,
          "record",
          "-r",
          std::to_string(hz),
          "-d",
          std::to_string(seconds),
          "--nonblocking",
          "--format",
          "raw",
          "-F",
          "--output",
          output,
          "-p",
          std::to_string(pid),
          "--full-filenames",
          "--gil"};
}

namespace {

class PySpyAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "py-spy"; }
  Runtime runtime() const override { return Runtime::python; }
  std::string unavailable_reason() const override {
    return find_program("py-spy").empty() ? "py-spy is not installed (not on PATH)" : "";
  }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile out;
    std::string program = find_program("py-spy");
    if (program.empty()) {
      out.error_frame = skip_frame("py-spy is not installed (not on PATH)");
      return out;
    }
    int hz = std::clamp(params.frequency_hz, 1, kPySpyMaxFrequencyHz);
    if (params.frequency_hz > kPySpyMaxFrequencyHz) {
      out.warnings.push_back("py-spy frequency limited to " + std::to_string(kPySpyMaxFrequencyHz) +
                             " Hz (asked " + std::to_string(params.frequency_hz) +
                             " Hz), as gProfiler does");
    }
    std::string dir = params.work_dir.empty() ? "/tmp" : params.work_dir;
    std::string output =
        dir + "/pyspy." + random_letters(16) + "." + std::to_string(target.pid) + ".col";
    RunOptions run;
    run.argv = python::py_spy_command(program, target.pid, hz, params.duration, output);
    run.timeout = params.duration + kTimeoutMargin;
    run.stop_signal = SIGINT;  // py-spy writes what it has on Ctrl-C
    auto result = run_profiler(run, stop);
    std::ifstream in(output);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(output.c_str());
    if (!result) {
      out.error_frame = error_frame("cannot run py-spy: " + result.error().message);
      return out;
    }
    return finish(target, *result, text.str(), std::move(out));
  }

 private:
  static Profile finish(const Target& target, const RunResult& r, const std::string& text,
                        Profile out) {
    bool alive = process_alive(target.pid);
    if (!r.success() && !r.stopped) {
      if (!alive && r.err.find("Failed to get process executable name") != std::string::npos) {
        out.error_frame = error_frame("process exited before py-spy started");
      } else if (!alive) {
        out.error_frame = error_frame("process went down during profiling");
      } else {
        std::string why = last_line(r.err);
        out.error_frame = error_frame("py-spy " + r.describe() + (why.empty() ? "" : ": " + why));
      }
      return out;
    }
    auto parsed = python::parse_py_spy_output(text);
    if (parsed.bad_lines > 0) {
      out.warnings.push_back("py-spy output had " + std::to_string(parsed.bad_lines) +
                             " malformed line(s), skipped");
    }
    out.stacks = std::move(parsed.stacks);
    return out;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_py_spy_adapter() { return std::make_unique<PySpyAdapter>(); }

}  // namespace gp::runtime
