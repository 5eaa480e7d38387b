#pragma once
// Exits of every task on the host with their exit status, from the kernel's process events
// connector (netlink NETLINK_CONNECTOR, CN_IDX_PROC; linux/cn_proc.h), as gProfiler's
// granulate_utils.linux.proc_events listens for them. Needs CAP_NET_ADMIN and, as the
// connector only speaks in the initial network namespace, is opened there (setns on the
// calling thread when it is elsewhere: call open() from the thread that reads).

#include <cstdint>
#include <functional>

#include "gp/proc/unique_fd.h"
#include "gp/util/result.h"

namespace gp::runtime {

struct ProcExit {
  int tid = 0;             // the task that exited (process_pid)
  int pid = 0;             // its thread group (process_tgid)
  uint32_t exit_code = 0;  // the wait(2) status: WIFSIGNALED/WTERMSIG apply
};

class ProcExits {
 public:
  static Result<ProcExits> open();

  int fd() const { return fd_.get(); }
  // Calls `each` for every exit event received since the last call (never blocks). Other
  // events (fork, exec, ...) are read and dropped. False when the socket failed for good.
  bool read_new(const std::function<void(const ProcExit&)>& each);

 private:
  explicit ProcExits(gp::proc::UniqueFd fd) : fd_(std::move(fd)) {}
  gp::proc::UniqueFd fd_;
};

}  // namespace gp::runtime
