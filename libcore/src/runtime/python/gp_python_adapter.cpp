// The gp-python adapter: gp's own CPython sampler (python_sampler.h) driven at the session's
// frequency, producing gProfiler's py-spy frames: like `py-spy record --gil -F`, a sample
// holds the thread that owns the GIL, frames are aggregated per function (first line).
#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>

#include "gp/runtime/adapters.h"
#include "runtime/python/python_sampler.h"
#include "runtime/remote/sampled_profile.h"
#include "runtime/remote/sampling_clock.h"

namespace gp::runtime {
namespace {

using python::PythonSampler;
using python::ThreadSample;
using python::WalkStatus;

// gProfiler's limit_frequency for py-spy (gprofiler.md §5.1).
constexpr int kGpPythonMaxFrequencyHz = 50;

std::vector<Frame> python_frames(const ThreadSample& t) {
  std::vector<Frame> frames;
  frames.reserve(t.frames.size());
  for (const auto& f : t.frames)
    frames.push_back({model::FrameKind::python, f.name, f.file, f.first_line, f.line, {}});
  return frames;
}

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
    if (!sampler.interpreter().layout_note.empty())
      out.warnings.push_back(sampler.interpreter().layout_note);
    int hz = remote::limited_frequency(params, kGpPythonMaxFrequencyHz, "python", out);
    if (WalkStatus st = run(sampler, target.pid, hz, params.duration, stop, out);
        st != WalkStatus::ok) {
      out.stacks.clear();
      out.error_frame = remote::lost_process_frame(st);
      return out;
    }
    const auto& info = sampler.interpreter();
    if (info.version.micro >= 0) {
      out.app_metadata_json = "{\"python_version\": \"Python " + info.version.text() + "\"}";
    }
    const auto& stats = sampler.stats();
    if (auto w = remote::dropped_samples_warning(stats.given_up, stats.snapshots, "python",
                                                 "stacks changed while read"))
      out.warnings.push_back(std::move(*w));
    return out;
  }

 private:
  // Samples every 1/hz s until the duration is over or stop; ok unless the process went down
  // or its memory became unreadable.
  static WalkStatus run(PythonSampler& sampler, pid_t pid, int hz,
                        std::chrono::milliseconds duration, std::stop_token stop, Profile& out) {
    remote::StackCounter counter(pid);
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
        if (t.holds_gil && !t.frames.empty()) counter.add(t.native_tid, python_frames(t));
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
