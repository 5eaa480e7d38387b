// --nodejs-mode inspector: JS stacks sampled by V8's own CPU profiler, driven through the
// inspector's Profiler domain (for hosts where perf maps are not wanted). The inspector is
// opened (SIGUSR1) for the session and closed again at its end.
#include <algorithm>

#include "gp/runtime/adapters.h"
#include "runtime/node/cpu_profile.h"
#include "runtime/node/inspector.h"
#include "runtime/node/node_target.h"

namespace gp::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kStepTimeout{10};

json::Value interval_params(int frequency_hz) {
  const int hz = std::clamp(frequency_hz, 1, 10000);
  json::Value p = json::Value::object();
  p.set("interval", json::Value::from_int(1000000 / hz));  // microseconds
  return p;
}

Result<json::Value> sample(node::InspectorSession& s, const SessionParams& params,
                           std::stop_token stop) {
  const json::Value none = json::Value::object();
  for (auto [method, args] :
       {std::pair{"Profiler.enable", none},
        std::pair{"Profiler.setSamplingInterval", interval_params(params.frequency_hz)},
        std::pair{"Profiler.start", none}}) {
    if (auto r = s.call(method, args, Clock::now() + kStepTimeout); !r) return r.error();
  }
  auto exiting = s.wait(params.duration, stop);
  if (!exiting) return exiting.error();
  if (*exiting) {
    s.disconnect();  // let it exit now; its samples go with it
    return make_error("process went down during profiling");
  }
  // A long session's profile is large (V8 serialises it on the target's main thread).
  auto result = s.call("Profiler.stop", none, Clock::now() + std::chrono::seconds(60));
  (void)s.call("Profiler.disable", none, Clock::now() + kStepTimeout);
  if (!result) return result.error();
  const json::Value* profile = result->find("profile");
  if (profile == nullptr) return make_error("Profiler.stop returned no profile");
  return *profile;
}

class NodeInspectorAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "node-inspector"; }
  Runtime runtime() const override { return Runtime::node; }
  std::string unavailable_reason() const override { return {}; }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile p;
    auto session = node::open_inspector(target.pid, Clock::now() + kStepTimeout);
    if (!session) {
      p.error_frame = error_frame(node::failure_reason(
          target.pid, "cannot open the node inspector: " + session.error().message));
      return p;
    }
    auto profile = sample(*session, params, stop);
    if (auto closed = session->close(Clock::now() + kStepTimeout); !closed)
      p.warnings.push_back(closed.error().message);
    if (!profile) {
      p.error_frame = error_frame(node::failure_reason(target.pid, profile.error().message));
      return p;
    }
    auto stacks = node::stacks_from_cpu_profile(*profile);
    if (!stacks) {
      p.error_frame = error_frame(stacks.error().message);
      return p;
    }
    p.stacks = std::move(*stacks);
    return p;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_node_inspector_adapter() {
  return std::make_unique<NodeInspectorAdapter>();
}

}  // namespace gp::runtime
