// Helper programs of the Java adapters (see tool_runner.h).
#include "tool_runner.h"

namespace gp::runtime::java {

Result<RunResult> run_tool(const ToolCommand& cmd, std::stop_token stop) {
  if (cmd.argv.empty()) return make_error("no program to run");
  std::string exe = find_program(cmd.argv[0]);
  if (exe.empty()) return make_error("'" + cmd.argv[0] + "' was not found");
  RunOptions o;
  o.timeout = cmd.timeout;
  o.cwd = "/";  // the JVM's user may not be able to enter gp's working directory
  if (cmd.as_user) {
    o.argv = {"setpriv", "--reuid=" + std::to_string(cmd.as_user->uid),
              "--regid=" + std::to_string(cmd.as_user->gid), "--clear-groups", "--"};
  }
  if (!cmd.stdout_path.empty()) {
    // The file is opened by the shell (as gp, before any setpriv) with noclobber; its size is
    // capped by ulimit (in 512-byte blocks for dash's -f, as POSIX says).
    std::vector<std::string> sh = {
        "/bin/sh",
        "-c",
        "set -C; ulimit -f \"$1\" && out=$2 && shift 2 && exec \"$@\" > \"$out\"",
        "sh",
        std::to_string(cmd.max_file_kib * 2),
        cmd.stdout_path};
    o.argv.insert(o.argv.begin(), sh.begin(), sh.end());
  }
  o.argv.push_back(exe);
  o.argv.insert(o.argv.end(), cmd.argv.begin() + 1, cmd.argv.end());
  return run_profiler(o, stop);
}

std::string describe_failure(const ToolCommand& cmd, const RunResult& r) {
  std::string prog = cmd.argv.empty() ? "program" : cmd.argv[0];
  size_t slash = prog.rfind('/');
  if (slash != std::string::npos) prog = prog.substr(slash + 1);
  std::string what = prog + " " + r.describe();
  // The most telling line: the last non-empty one of stderr, else of stdout.
  for (const std::string* text : {&r.err, &r.out}) {
    size_t end = text->find_last_not_of(" \r\n\t");
    if (end == std::string::npos) continue;
    size_t start = text->rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    return what + ": " + text->substr(start, end - start + 1);
  }
  return what;
}

}  // namespace gp::runtime::java
