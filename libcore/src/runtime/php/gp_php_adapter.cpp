// The gp-php adapter: gp's own PHP sampler (php_sampler.h) driven at the session's frequency,
// producing the frames gProfiler writes for phpspy: "[Class::]function FILE:LINE" (gp-fold adds
// "_[php]"), "<main>" for a file's top-level code, "function <internal>:-1" for internal
// functions. Frequency capped at 999 Hz as gProfiler caps phpspy (gprofiler.md §5.1).
#include <algorithm>
#include <map>

#include "gp/runtime/adapters.h"
#include "runtime/php/php_sampler.h"
#include "runtime/remote/sampled_profile.h"
#include "runtime/remote/sampling_clock.h"

namespace gp::runtime {
namespace {

using php::PhpFrame;
using php::PhpSampler;
using remote::WalkStatus;

constexpr int kGpPhpMaxFrequencyHz = 999;  // PHPSpyProfiler.MAX_FREQUENCY

Frame to_frame(const PhpFrame& f) {
  Frame out;
  out.kind = model::FrameKind::php;
  out.name = f.text();
  out.file = f.file;
  out.line = f.line > 0 && f.line <= UINT32_MAX ? static_cast<uint32_t>(f.line) : 0;
  return out;
}

class GpPhpAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "gp-php"; }
  Runtime runtime() const override { return Runtime::php; }
  std::string unavailable_reason() const override { return {}; }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile out;
    auto attached = PhpSampler::attach(target.pid);
    if (auto* failure = std::get_if<php::AttachFailure>(&attached)) {
      using Kind = php::AttachFailure::Kind;
      bool skip = failure->kind == Kind::unsupported || failure->kind == Kind::not_php;
      out.error_frame = skip ? skip_frame(failure->reason) : error_frame(failure->reason);
      return out;
    }
    auto& sampler = *std::get<std::unique_ptr<PhpSampler>>(attached);
    int hz = remote::limited_frequency(params, kGpPhpMaxFrequencyHz, "php", out);
    remote::StackCounter counter(target.pid);
    std::vector<PhpFrame> frames;
    WalkStatus final = WalkStatus::ok;
    remote::every_tick(hz, params.duration, stop, [&] {
      WalkStatus st = sampler.sample(frames);
      if (st == WalkStatus::gone || st == WalkStatus::denied) {
        final = st;
        return false;
      }
      if (st != WalkStatus::ok || frames.empty()) return true;  // torn, or no PHP code running
      std::vector<Frame> stack;
      stack.reserve(frames.size());
      for (const auto& f : frames) stack.push_back(to_frame(f));
      counter.add(target.pid, std::move(stack));  // the main thread: PHP runs on one
      return true;
    });
    if (final != WalkStatus::ok) {
      out.error_frame = remote::lost_process_frame(final);
      return out;
    }
    out.stacks = counter.take();
    out.app_metadata_json =
        "{\"php_version\": \"PHP " + sampler.interpreter().version.text() + "\"}";
    const auto& stats = sampler.stats();
    if (out.stacks.empty() && stats.given_up > 0) {
      // Not one snapshot held together: the stack is corrupt, or changes faster than it is read.
      out.error_frame = error_frame("cannot walk the PHP stack: " + sampler.last_problem());
    } else if (auto w = remote::dropped_samples_warning(stats.given_up, stats.snapshots, "php",
                                                        sampler.last_problem())) {
      out.warnings.push_back(std::move(*w));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_gp_php_adapter() { return std::make_unique<GpPhpAdapter>(); }

}  // namespace gp::runtime
