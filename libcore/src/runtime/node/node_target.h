#pragma once
// Facts about a Node target and gp's perf-map addon (private to libcore/src/runtime/node).

#include <sys/types.h>

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include "gp/proc/unique_fd.h"
#include "gp/runtime/adapter.h"
#include "gp/util/result.h"

namespace gp::runtime::node {

// How the process makes V8 write /tmp/perf-PID.map, from its node options (the command line
// before the script) and NODE_OPTIONS in its environment: "--perf-basic-prof",
// "--perf-basic-prof-only-functions" (either spelling, '-' or '_'), or empty.
std::string perf_map_flag(const std::vector<std::string>& cmdline, const std::string& node_options);

// NODE_OPTIONS from /proc/PID/environ (empty when unset or unreadable).
std::string node_options_of(int32_t pid);

// The addon file (gp_node_perfmap.node) for this installation: $GP_NODE_ADDON, then next to
// the running binary (<exe dir>/../lib/gp/, <exe dir>/), then the build and install
// directories configured at build time. Error with the places tried.
Result<std::string> find_node_addon();

// The addon as a path the target can load. A target that shares our root gets `addon` as
// is; a target in another mount namespace gets a copy in its /tmp (a fresh 0755 directory
// made with mkdirat, the file created O_EXCL, nothing followed below /proc/PID/root), which
// `cleanup` removes.
struct PlacedAddon {
  std::string path_in_target;
  proc::UniqueFd tmp_dir;  // the target's /tmp, when a copy was made
  std::string copy_dir;    // name of the copy's directory in it
};
Result<PlacedAddon> place_addon(const Target& target, const std::string& addon);
void remove_placed_addon(PlacedAddon& placed);

// gProfiler's reason when the target is gone (gprofiler.md §2.9), else `fallback`.
std::string failure_reason(int32_t pid, std::string fallback);

}  // namespace gp::runtime::node
