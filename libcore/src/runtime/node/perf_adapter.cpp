// --nodejs-mode perf: Node processes that write their own perf map.
//
// A Node started with --perf-basic-prof (or NODE_OPTIONS holding it) writes /tmp/perf-PID.map;
// gp-record copies it and gp-symbolize names the JIT frames, so this adapter collects no
// stacks. gProfiler's perf mode does nothing per process either (gprofiler.md §3.6): a Node
// without the flag is not skipped with a frame, its JS frames just stay unnamed; gp says so.
#include "gp/runtime/adapters.h"
#include "runtime/node/node_target.h"

namespace gp::runtime {
namespace {

class NodePerfAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "node-perf"; }
  Runtime runtime() const override { return Runtime::node; }
  std::string unavailable_reason() const override { return {}; }

  Profile profile(const Target& target, const SessionParams&, std::stop_token) override {
    Profile p;
    const std::string flag = node::perf_map_flag(target.cmdline, node::node_options_of(target.pid));
    if (flag.empty()) {
      p.warnings.push_back(
          "started without --perf-basic-prof: its JS frames stay unnamed "
          "(--nodejs-mode attach-maps turns perf maps on in a running node)");
    }
    return p;
  }
};

}  // namespace

std::unique_ptr<Adapter> make_node_perf_adapter() { return std::make_unique<NodePerfAdapter>(); }

}  // namespace gp::runtime
