#include "gp/import/perf_runner.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gp/util/subprocess.h"

namespace gp::import {
namespace {

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return {};
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

}  // namespace

std::vector<std::string> PerfScriptProcess::script_args(const std::string& data_path) {
  return {"script", "-i", data_path, "--header", "-F", "+pid"};
}

Result<std::unique_ptr<PerfScriptProcess>> PerfScriptProcess::start(
    const std::string& perf_exe, const std::vector<std::string>& args) {
  int err_fd = memfd_create("gp-import-perf-stderr", MFD_CLOEXEC);
  if (err_fd < 0) return make_error(std::string("memfd_create: ") + std::strerror(errno));
  // perf stays in gp-import's process group (a terminal's Ctrl-C reaches both), with the
  // parent's environment; stdout is the pipe the caller streams, stderr the memfd.
  util::SpawnOptions o;
  o.argv.push_back(perf_exe);
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.out = util::Stdio::pipe();
  o.err = util::Stdio::from_fd(err_fd);
  o.new_process_group = false;
  auto child = util::spawn(o);
  if (!child) {
    close(err_fd);
    return child.error();
  }
  return std::unique_ptr<PerfScriptProcess>(
      new PerfScriptProcess(child->pid, child->out, err_fd, perf_exe));
}

PerfScriptProcess::~PerfScriptProcess() {
  if (out_fd_ >= 0) close(out_fd_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    util::wait_exit(pid_);
  }
  if (err_fd_ >= 0) close(err_fd_);
}

void PerfScriptProcess::collect_stderr() {
  char buf[4096];
  off_t off = 0;
  ssize_t n;
  while ((n = pread(err_fd_, buf, sizeof buf, off)) > 0 && stderr_.size() < (1u << 20)) {
    stderr_.append(buf, static_cast<size_t>(n));
    off += n;
  }
}

Status PerfScriptProcess::wait() {
  if (out_fd_ >= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
  const util::ExitStatus status = util::wait_exit(pid_);
  pid_ = -1;
  collect_stderr();
  if (status.ok()) return ok_status();
  std::string why = status.describe();
  std::string line = last_line(stderr_);
  if (!line.empty()) why += ": " + line;
  return make_error("'" + exe_ + " script' failed (" + why + ")");
}

}  // namespace gp::import
