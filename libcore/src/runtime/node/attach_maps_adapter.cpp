// --nodejs-mode attach-maps: perf maps switched on in a Node that runs without
// --perf-basic-prof, for the session only (gProfiler's attach-maps, gprofiler.md §3.6).
//
// The inspector is opened (SIGUSR1), gp's addon is loaded with process.dlopen and enabled
// (V8's JIT code event handler writes /tmp/perf-<nspid>.map, existing code first), and at the
// end of the session, or on SIGTERM, the handler is disabled and the inspector closed, so the
// process is left as found. The map file stays for gp-record, which copies it at the end of
// its own session; gProfiler deletes it, gp cannot (gp-record may still be running).
#include <cstring>

#include "gp/runtime/adapters.h"
#include "runtime/node/inspector.h"
#include "runtime/node/node_target.h"

namespace gp::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kStepTimeout{10};
// NODE_MODULE_VERSION of the Node the addon was built against.
#ifndef GP_NODE_ADDON_ABI
#define GP_NODE_ADDON_ABI 0
#endif

// A JS string literal of `s` (JSON's escaping is valid JS).
std::string js_string(std::string_view s) {
  std::string out;
  json::append_quoted(s, out);
  return out;
}

// A fresh module object per load: context-aware addons initialise again on each dlopen and
// share the library's state, so disable() reaches the handler enable() registered without
// gp leaving a global behind in the target.
std::string call_addon(const std::string& path, const char* fn) {
  return "(() => { const m = { exports: {} }; process.dlopen(m, " + js_string(path) +
         "); return m.exports." + fn + "(); })()";
}

Status check_abi(node::InspectorSession& s) {
  auto abi =
      s.evaluate("process.versions.modules + ' ' + process.version", Clock::now() + kStepTimeout);
  if (!abi) return abi.error();
  const std::string text = abi->text;
  if (GP_NODE_ADDON_ABI != 0 && std::atoi(text.c_str()) != GP_NODE_ADDON_ABI) {
    return make_error("node " + text.substr(text.find(' ') + 1) + " (ABI " +
                      text.substr(0, text.find(' ')) + ") cannot load gp's addon, built for ABI " +
                      std::to_string(GP_NODE_ADDON_ABI));
  }
  return ok_status();
}

void disable(node::InspectorSession& s, const std::string& path, int32_t pid, Profile& p) {
  auto disabled = s.evaluate(call_addon(path, "disable"), Clock::now() + kStepTimeout);
  if (disabled) return;
  const std::string why = node::failure_reason(pid, "");
  if (why.empty()) {
    p.warnings.push_back("cannot switch the perf map off: " + disabled.error().message);
  } else {
    p.error_frame = error_frame(why);
  }
}

class NodeAttachMapsAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "node-attach-maps"; }
  Runtime runtime() const override { return Runtime::node; }
  std::string unavailable_reason() const override {
    auto addon = node::find_node_addon();
    return addon ? std::string() : addon.error().message;
  }

  Profile profile(const Target& target, const SessionParams& params,
                  std::stop_token stop) override {
    Profile p;
    if (!node::perf_map_flag(target.cmdline, node::node_options_of(target.pid)).empty()) return p;
    auto addon = node::find_node_addon();
    if (!addon) {
      p.error_frame = skip_frame(addon.error().message);
      return p;
    }
    auto session = node::open_inspector(target.pid, Clock::now() + kStepTimeout);
    if (!session) {
      p.error_frame = error_frame(node::failure_reason(
          target.pid, "cannot open the node inspector: " + session.error().message));
      return p;
    }
    if (auto abi = check_abi(*session); !abi) {
      p.error_frame = skip_frame(abi.error().message);
    } else {
      run_maps(*session, target, *addon, params, stop, p);
    }
    if (auto closed = session->close(Clock::now() + kStepTimeout); !closed)
      p.warnings.push_back(closed.error().message);
    return p;
  }

 private:
  static void run_maps(node::InspectorSession& s, const Target& target, const std::string& addon,
                       const SessionParams& params, std::stop_token stop, Profile& p) {
    auto placed = node::place_addon(target, addon);
    if (!placed) {
      p.error_frame =
          skip_frame("cannot make gp's addon readable in the process's mount namespace: " +
                     placed.error().message);
      return;
    }
    auto enabled =
        s.evaluate(call_addon(placed->path_in_target, "enable"), Clock::now() + kStepTimeout);
    if (!enabled) {
      p.error_frame = error_frame("cannot load gp's addon: " + enabled.error().message);
    } else {
      auto exiting = s.wait(params.duration, stop);
      if (!exiting || *exiting) {
        s.disconnect();  // never keep an exiting Node waiting for us
        p.error_frame = error_frame(node::failure_reason(
            target.pid, exiting ? std::string("process went down during profiling")
                                : "inspector connection lost: " + exiting.error().message));
      } else {
        disable(s, placed->path_in_target, target.pid, p);
      }
    }
    node::remove_placed_addon(*placed);
  }
};

}  // namespace

std::unique_ptr<Adapter> make_node_attach_maps_adapter() {
  return std::make_unique<NodeAttachMapsAdapter>();
}

}  // namespace gp::runtime
