// run_profiler: an external profiler through gp's one spawner, with a cleared environment.
#include "gp/runtime/subprocess.h"
#include "gp/runtime/discovery.h"

#include <unistd.h>

#include <cstdlib>

namespace gp::runtime {
namespace {

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

std::vector<std::string> child_environment(const RunOptions& o) {
  std::vector<std::string> env;
  const char* path = std::getenv("PATH");
  env.push_back(std::string("PATH=") + (path != nullptr && *path != '\0' ? path : kDefaultPath));
  for (const char* name : {"HOME", "TMPDIR", "LANG"}) {
    if (const char* v = std::getenv(name)) env.push_back(std::string(name) + "=" + v);
  }
  // gp's own mark: another gp instance's discovery never takes this process (a jcmd is a JVM
  // too) for an application (discovery.h).
  env.push_back(std::string(kSpawnedEnv) + "=gp-runtime " + std::to_string(::getpid()));
  // An extra NAME=value replaces an inherited NAME: getenv() takes the first match, so a
  // duplicate would silently keep gp's own value (e.g. TMPDIR for dotnet-trace).
  for (const std::string& extra : o.extra_env) {
    std::string prefix = extra.substr(0, extra.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(prefix); });
    env.push_back(extra);
  }
  return env;
}

}  // namespace

Result<RunResult> run_profiler(const RunOptions& o, std::stop_token stop) {
  util::SpawnOptions spawn;
  spawn.argv = o.argv;
  spawn.env = child_environment(o);
  spawn.cwd = o.cwd;
  spawn.parent_death_signal = SIGKILL;
  spawn.address_space_bytes = o.address_space_bytes;
  spawn.cpu_seconds = o.cpu_seconds;
  util::RunLimits limits;
  limits.timeout = o.timeout;
  limits.max_output_bytes = o.max_output_bytes;
  limits.stop_signal = o.stop_signal;
  limits.stop_grace = o.stop_grace;
  return util::run(std::move(spawn), limits, stop);
}

}  // namespace gp::runtime
