// The gp-ruby adapter: gp's own CRuby sampler (ruby_sampler.h) driven at the session's
// frequency, producing the frames rbspy writes for gProfiler ("LABEL - PATH:LINE", C functions
// "NAME [c function] - (unknown):0"; gp-fold adds "_[rb]"). Like `rbspy record --oncpu`, a
// sample holds the threads the kernel has on a CPU (state R) when the snapshot is taken, and the
// frequency is limited to gProfiler's 100 Hz for rbspy.
#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_map>

#include "gp/runtime/adapters.h"
#include "runtime/remote/sampled_profile.h"
#include "runtime/remote/sampling_clock.h"
#include "runtime/ruby/ruby_sampler.h"
#include "runtime/spies/spy_output.h"

namespace gp::runtime {
namespace {

using ruby::RubySampler;
using ruby::RubyThreadSample;
using ruby::WalkStatus;

// gProfiler's RbSpyProfiler.MAX_FREQUENCY (gprofiler.md §5.1).
constexpr int kGpRubyMaxFrequencyHz = 100;

// rbspy's frame text for a frame (its StackFrame Display).
std::string rbspy_text(const ruby::RubyFrame& f) {
  if (f.cfunc) return f.label + " [c function] - (unknown):0";
  return f.label + " - " + f.path + ":" + std::to_string(f.line);
}

std::vector<Frame> ruby_frames(const RubyThreadSample& t) {
  std::vector<Frame> frames;
  frames.reserve(t.frames.size());
  for (const auto& f : t.frames) frames.push_back(spies::parse_rbspy_frame(rbspy_text(f)));
  return frames;
}

class GpRubyAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "gp-ruby"; }
  Runtime runtime() const override { return Runtime::ruby; }
  std::string unavailable_reason() const override { return {}; }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile out;
    auto attached = RubySampler::attach(target.pid);
    if (auto* failure = std::get_if<ruby::AttachFailure>(&attached)) {
      using Kind = ruby::AttachFailure::Kind;
      bool skip = failure->kind == Kind::unsupported || failure->kind == Kind::not_ruby;
      out.error_frame = skip ? skip_frame(failure->reason) : error_frame(failure->reason);
      return out;
    }
    auto& sampler = *std::get<std::unique_ptr<RubySampler>>(attached);
    int hz = remote::limited_frequency(params, kGpRubyMaxFrequencyHz, "ruby", out);
    remote::StackCounter counter(target.pid);
    std::vector<RubyThreadSample> threads;
    WalkStatus final_status = WalkStatus::ok;
    std::unordered_map<int32_t, int32_t> tids;  // the process's tids -> gp's
    remote::every_tick(hz, params.duration, stop, [&] {
      bool refreshed = false;
      WalkStatus st = sampler.sample(threads);
      if (st == WalkStatus::gone || st == WalkStatus::denied) {
        final_status = st;
        return false;
      }
      if (st != WalkStatus::ok) return true;
      for (auto& t : threads) {
        if (t.frames.empty()) continue;
        // Ruby records each thread's tid in its own pid namespace (a container's): gp's is
        // looked up once per new thread.
        auto host = tids.find(t.tid);
        if (host == tids.end() && !refreshed) {
          tids = remote::namespace_tids(target.pid);
          refreshed = true;
          host = tids.find(t.tid);
        }
        if (host == tids.end()) continue;  // a thread that already exited
        t.tid = host->second;
        if (remote::thread_on_cpu(target.pid, t.tid)) counter.add(t.tid, ruby_frames(t));
      }
      return true;
    });
    if (final_status != WalkStatus::ok) {
      out.error_frame = remote::lost_process_frame(final_status);
      return out;
    }
    out.stacks = counter.take();
    const auto& stats = sampler.stats();
    if (stats.snapshots == 0 && stats.given_up > 0) {
      out.error_frame =
          error_frame("no Ruby stack could be read (" + std::to_string(stats.given_up) +
                      " snapshots failed: " + sampler.last_torn_reason() + ")");
    } else if (auto w = remote::dropped_samples_warning(
                   stats.given_up, stats.snapshots, "ruby",
                   "stacks changed while read: " + sampler.last_torn_reason())) {
      out.warnings.push_back(std::move(*w));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_gp_ruby_adapter() { return std::make_unique<GpRubyAdapter>(); }

}  // namespace gp::runtime
