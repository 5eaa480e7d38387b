// The gp-python adapter: gp's own CPython sampler (python_sampler.h) driven at the session's
// frequency, producing gProfiler's py-spy frames: like `py-spy record --gil -F`, a sample
// holds the thread that owns the GIL, frames are aggregated per function (first line).
#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>

#include "gp/runtime/adapters.h"
#include "runtime/python/python_sampler.h"
#include "runtime/remote/sampling_clock.h"

namespace gp::runtime {
namespace {

using python::PythonSampler;
using python::ThreadSample;
using python::WalkStatus;

// gProfiler's limit_frequency for py-spy (gprofiler.md §5.1).
constexpr int kMaxFrequencyHz = 50;

// Samples aggregated by thread and stack (names, files, first and current lines).
class StackCounter {
 public:
  void add(pid_t pid, const ThreadSample& t) {
    std::string key = std::to_string(t.native_tid);
    for (const auto& f : t.frames) {
      key += '\n' + f.name + '\t' + f.file + '\t' + std::to_string(f.first_line) + ':' +
             std::to_string(f.line);
    }
    auto [it, fresh] = stacks_.try_emplace(key);
    if (fresh) {
      Stack& s = it->second;
      s.tid = t.native_tid;
      s.thread_name =
          names_.try_emplace(t.native_tid, remote::thread_name(pid, t.native_tid)).first->second;
      for (const auto& f : t.frames) {
        s.frames.push_back({model::FrameKind::python, f.name, f.file, f.first_line, f.line, {}});
      }
    }
    ++it->second.count;
  }
  std::vector<Stack> take() {
    std::vector<Stack> out;
    for (auto& [key, s] : stacks_) out.push_back(std::move(s));
    return out;
  }

 private:
  std::map<std::string, Stack> stacks_;
  std::map<int32_t, std::string> names_;
};

class GpPythonAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "gp-python"; }
  Runtime runtime() const override { return Runtime::python; }
  std::string unavailable_reason() const override { return {}; }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile out;
    auto attached = PythonSampler::attach(target.pid);
    if (auto* failure = std::get_if<python::AttachFailure>(&attached)) {
      using Kind = python::AttachFailure::Kind;
      bool skip = failure->kind == Kind::unsupported || failure->kind == Kind::not_python;
      out.error_frame = skip ? skip_frame(failure->reason) : error_frame(failure->reason);
      return out;
    }
    auto& sampler = *std::get<std::unique_ptr<PythonSampler>>(attached);
    int hz = std::clamp(params.frequency_hz, 1, kMaxFrequencyHz);
    if (params.frequency_hz > kMaxFrequencyHz) {
      out.warnings.push_back("python sampling frequency limited to " +
                             std::to_string(kMaxFrequencyHz) + " Hz (asked " +
                             std::to_string(params.frequency_hz) + " Hz), as gProfiler does");
    }
    if (WalkStatus st = run(sampler, target.pid, hz, params.duration, stop, out);
        st != WalkStatus::ok) {
      out.stacks.clear();
      out.error_frame = st == WalkStatus::gone
                            ? error_frame("process went down during profiling")
                            : error_frame("cannot read the process's memory: permission denied");
      return out;
    }
    const auto& info = sampler.interpreter();
    if (info.version.micro >= 0) {
      out.app_metadata_json = "{\"python_version\": \"Python " + info.version.text() + "\"}";
    }
    const auto& stats = sampler.stats();
    if (stats.given_up * 10 > stats.snapshots + stats.given_up && stats.given_up > 0) {
      out.warnings.push_back(std::to_string(stats.given_up) + " of " +
                             std::to_string(stats.snapshots + stats.given_up) +
                             " python samples were dropped (stacks changed while read)");
    }
    return out;
  }

 private:
  // Samples every 1/hz s until the duration is over or stop; ok unless the process went down
  // or its memory became unreadable.
  static WalkStatus run(PythonSampler& sampler, pid_t pid, int hz,
                        std::chrono::milliseconds duration, std::stop_token stop, Profile& out) {
    StackCounter counter;
    std::vector<ThreadSample> threads;
    WalkStatus final_status = WalkStatus::ok;
    remote::every_tick(hz, duration, stop, [&] {
      WalkStatus st = sampler.sample(threads);
      if (st == WalkStatus::gone || st == WalkStatus::denied) {
        final_status = st;
        return false;
      }
      if (st != WalkStatus::ok) return true;
      for (const auto& t : threads) {
        if (t.holds_gil && !t.frames.empty()) counter.add(pid, t);
      }
      return true;
    });
    if (final_status != WalkStatus::ok) return final_status;
    out.stacks = counter.take();
    return WalkStatus::ok;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_gp_python_adapter() { return std::make_unique<GpPythonAdapter>(); }

}  // namespace gp::runtime
