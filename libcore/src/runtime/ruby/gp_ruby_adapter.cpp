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
#include "runtime/remote/sampling_clock.h"
#include "runtime/ruby/ruby_sampler.h"
#include "runtime/spies/spy_output.h"

namespace gp::runtime {
namespace {

using ruby::RubySampler;
using ruby::RubyThreadSample;
using ruby::WalkStatus;

// gProfiler's RbSpyProfiler.MAX_FREQUENCY (gprofiler.md §5.1).
constexpr int kMaxFrequencyHz = 100;

// rbspy's frame text for a frame (its StackFrame Display).
std::string rbspy_text(const ruby::RubyFrame& f) {
  if (f.cfunc) return f.label + " [c function] - (unknown):0";
  return f.label + " - " + f.path + ":" + std::to_string(f.line);
}

// Samples aggregated by thread and stack.
class StackCounter {
 public:
  void add(pid_t pid, const RubyThreadSample& t) {
    std::vector<std::string> texts;
    std::string key = std::to_string(t.tid);
    for (const auto& f : t.frames) {
      texts.push_back(rbspy_text(f));
      key += '\n' + texts.back();
    }
    auto [it, fresh] = stacks_.try_emplace(key);
    if (fresh) {
      Stack& s = it->second;
      s.tid = t.tid;
      s.thread_name = names_.try_emplace(t.tid, remote::thread_name(pid, t.tid)).first->second;
      for (const auto& text : texts) s.frames.push_back(spies::parse_rbspy_frame(text));
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
    int hz = std::clamp(params.frequency_hz, 1, kMaxFrequencyHz);
    if (params.frequency_hz > kMaxFrequencyHz) {
      out.warnings.push_back("ruby sampling frequency limited to " +
                             std::to_string(kMaxFrequencyHz) + " Hz (asked " +
                             std::to_string(params.frequency_hz) + " Hz), as gProfiler does");
    }
    StackCounter counter;
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
        if (remote::thread_on_cpu(target.pid, t.tid)) counter.add(target.pid, t);
      }
      return true;
    });
    if (final_status != WalkStatus::ok) {
      out.error_frame = final_status == WalkStatus::gone
                            ? error_frame("process went down during profiling")
                            : error_frame("cannot read the process's memory: permission denied");
      return out;
    }
    out.stacks = counter.take();
    const auto& stats = sampler.stats();
    if (stats.snapshots == 0 && stats.given_up > 0) {
      out.error_frame =
          error_frame("no Ruby stack could be read (" + std::to_string(stats.given_up) +
                      " snapshots failed: " + sampler.last_torn_reason() + ")");
    } else if (stats.given_up * 10 > stats.snapshots + stats.given_up && stats.given_up > 0) {
      out.warnings.push_back(std::to_string(stats.given_up) + " of " +
                             std::to_string(stats.snapshots + stats.given_up) +
                             " ruby samples were dropped (stacks changed while read: " +
                             sampler.last_torn_reason() + ")");
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_gp_ruby_adapter() { return std::make_unique<GpRubyAdapter>(); }

}  // namespace gp::runtime
