#pragma once
// The kernel log as gProfiler's Java safemode reads it (granulate_utils.linux.devkmsg,
// .oom and .signals): /dev/kmsg read without blocking from where it ended when opened, and the
// two kinds of message that name a process the kernel killed or that died of a fault.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gp/proc/unique_fd.h"
#include "gp/util/result.h"

namespace gp::runtime {

enum class KernelEventKind {
  oom_kill,      // "...: Killed process PID (COMM) total-vm:..." (mm/oom_kill.c)
  fatal_signal,  // "COMM[PID]: segfault at ..." and the other unhandled-signal reports
};

struct KernelEvent {
  KernelEventKind kind;
  int pid = 0;       // in the initial pid namespace, as the kernel prints it
  std::string comm;  // at most 15 bytes (TASK_COMM_LEN - 1)
};

// The message of one /dev/kmsg record ("LEVEL,SEQ,USEC,FLAGS[,...];MESSAGE\n KEY=VALUE...",
// Documentation/ABI/testing/dev-kmsg): MESSAGE, without the dictionary lines; the record as
// given when it has no ';'.
std::string_view kmsg_message(std::string_view record);

// What a kernel message reports, by gProfiler's patterns: KILLED_PROCESS (oom.py) for the OOM
// killer's line, SHOW_SIGNAL_X86 and SHOW_SIGNAL_AARCH64 (signals.py) for a process's
// unhandled fault. nullopt for every other message.
std::optional<KernelEvent> parse_kernel_event(std::string_view message);

// /dev/kmsg opened non-blocking at its end: only messages logged after open() are read.
class KernelLog {
 public:
  // Fails when the device cannot be read (not root, or kernel.dmesg_restrict without
  // CAP_SYSLOG); the error says why.
  static Result<KernelLog> open(const std::string& path = "/dev/kmsg");

  int fd() const { return fd_.get(); }
  // Calls `each` with the message of every record logged since the last call, in order, and
  // returns how many times records were overwritten before they were read (EPIPE).
  unsigned read_new(const std::function<void(std::string_view message)>& each);

 private:
  explicit KernelLog(gp::proc::UniqueFd fd) : fd_(std::move(fd)) {}
  gp::proc::UniqueFd fd_;
};

}  // namespace gp::runtime
