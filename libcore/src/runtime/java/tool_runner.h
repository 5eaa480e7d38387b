#pragma once
// How the Java adapters run their helper programs (jcmd, jfr, asprof) through gp-runtime's
// run_profiler (gp/runtime/subprocess.h): optionally as the JVM's user (the attach mechanism
// answers only its own user; util-linux `setpriv` switches), optionally with stdout into a file
// (`jfr print --json` prints far more than a captured stream should hold).

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "gp/runtime/subprocess.h"
#include "gp/util/result.h"

namespace gp::runtime::java {

struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
};

struct ToolCommand {
  std::vector<std::string> argv;  // argv[0] is a path, or a name looked up in PATH
  std::chrono::milliseconds timeout{30000};
  std::optional<Credentials> as_user;  // run through `setpriv --reuid --regid --clear-groups`
  std::string stdout_path;             // when set, stdout goes to this new file
  uint64_t max_file_kib = 4ull << 20;  // `ulimit -f` for that file (KiB)
};

// Error only when the program could not be started (not found).
Result<RunResult> run_tool(const ToolCommand& cmd, std::stop_token stop);

// "<prog> exited with status N: <its last stderr/stdout line>" for messages.
std::string describe_failure(const ToolCommand& cmd, const RunResult& r);

}  // namespace gp::runtime::java
