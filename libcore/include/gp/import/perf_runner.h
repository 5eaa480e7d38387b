#pragma once
// Runs `perf script` on a perf.data file so gp-import can stream its text output. The child's
// stdout is a pipe the caller reads; its stderr is kept (in a memfd) for the error message.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "gp/util/result.h"

namespace gp::import {

class PerfScriptProcess {
 public:
  // The arguments gp-import gives perf: `script -i PATH --header -F +pid` (pid as well as tid,
  // and the host/event header lines).
  static std::vector<std::string> script_args(const std::string& data_path);

  // Starts `perf_exe args...` (perf_exe is looked up in PATH when it has no '/'). Fails when
  // perf cannot be started (not installed: the error says so).
  static Result<std::unique_ptr<PerfScriptProcess>> start(const std::string& perf_exe,
                                                          const std::vector<std::string>& args);
  // Kills (SIGTERM) and reaps perf if it is still running.
  ~PerfScriptProcess();
  PerfScriptProcess(const PerfScriptProcess&) = delete;
  PerfScriptProcess& operator=(const PerfScriptProcess&) = delete;

  // Read end of perf's stdout; owned by this object.
  int stdout_fd() const { return out_fd_; }
  // Closes stdout and waits for perf. An Error (with perf's exit status and the last line it
  // printed on stderr) when perf failed.
  Status wait();
  // Everything perf wrote on stderr (complete after wait()).
  const std::string& stderr_text() const { return stderr_; }

 private:
  PerfScriptProcess(pid_t pid, int out_fd, int err_fd, std::string exe)
      : pid_(pid), out_fd_(out_fd), err_fd_(err_fd), exe_(std::move(exe)) {}
  void collect_stderr();

  pid_t pid_;
  int out_fd_;
  int err_fd_;
  std::string exe_;
  std::string stderr_;
};

}  // namespace gp::import
