#pragma once
// run_profiler: run an external profiler (py-spy, jcmd, rbspy, ...) safely from an adapter,
// through gp's one spawner (util::run).
//
// The child gets a cleared environment (PATH, HOME, TMPDIR, LANG only, plus `extra_env`),
// stdin from /dev/null, its own process group, resource limits, and no inherited descriptors.
// Its stdout and stderr are captured up to `max_output_bytes` each (the rest is read and
// dropped, so a chatty child never blocks). The call blocks until the child exits, the timeout
// passes (then the whole process group gets SIGKILL), or `stop` is requested (then the child
// gets `stop_signal`, and SIGKILL after `stop_grace`). The child also gets SIGKILL if the
// calling thread dies first (PR_SET_PDEATHSIG). Thread-safe: adapters call it from their own
// threads at the same time.

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"
#include "gp/util/subprocess.h"

namespace gp::runtime {

struct RunOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  std::chrono::milliseconds timeout{30000};
  std::size_t max_output_bytes = 16u << 20;  // per stream
  uint64_t address_space_bytes = 0;          // RLIMIT_AS; 0 = no limit (JVMs reserve a lot)
  uint64_t cpu_seconds = 0;                  // RLIMIT_CPU; 0 = no limit
  std::string cwd;                           // empty = inherit
  std::vector<std::string> extra_env;        // "NAME=value", added to the cleared environment
  int stop_signal = SIGINT;                  // sent on stop (py-spy/rbspy write output on it)
  std::chrono::milliseconds stop_grace{3000};
};

// The captured run of gp's one spawner (gp/util/subprocess.h).
using RunResult = util::RunResult;

// Error only when the child could not be started (program not found or not executable, fork
// failed, no such working directory); a child that fails, times out or is stopped is a
// RunResult.
Result<RunResult> run_profiler(const RunOptions& options, std::stop_token stop = {});

// The absolute path of `name` on PATH (or `name` itself when it contains '/' and is an
// executable file); empty when not found. Adapters use it for unavailable_reason().
using util::find_program;

}  // namespace gp::runtime
