#pragma once
// gProfiler's Java safemode causes that come from the kernel (gprofiler/profilers/java.py:
// _handle_kernel_messages and _proc_exit_callback): a JVM gp-runtime profiled in this run that
// the kernel OOM-killed (profiled-oom) or that died of a fatal signal (profiled-signaled), and,
// when asked, any process's OOM kill or fatal fault (general-oom, general-signaled) or a
// profiled JVM's pid in any kernel message (pid-in-kernel-messages). The watch runs in the
// long-lived caller (gp-profile) for the whole run, as gp-runtime runs one process per session:
// it reads the profiled JVMs from the safemode state directory (gp-runtime marks each one it
// attaches to) and turns Java profiling off there, for gp-runtime's next sessions.

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gp/runtime/proc_exits.h"

namespace gp::runtime {

// What one kernel report means for the safemode: the cause it would turn Java profiling off for
// (when that cause is enabled) and gProfiler's warning about it.
struct SafemodeVerdict {
  std::string cause;
  std::string warning;
};

// gProfiler's _handle_kernel_messages for one message: an OOM kill or fatal fault of a profiled
// pid, else of any process, else (only when `profiled_pids` gives some) a profiled pid in the
// text. `profiled(pid)` says whether gp profiled that pid; `profiled_pids()` lists them all.
std::optional<SafemodeVerdict> kernel_message_verdict(
    std::string_view message, const std::function<bool(int)>& profiled,
    const std::function<std::vector<int>()>& profiled_pids);

// granulate_utils.java's java_exit_code_to_signo: the signal a JVM's exit status says it died
// of (143 exit: SIGTERM, as the JVM exits so on SIGTERM), 0 when none.
int java_exit_signal(uint32_t exit_code);

// granulate_utils.java's is_java_fatal_signal: SIGABRT (HotSpot's end after an error),
// SIGKILL (the OOM killer's) and SIGSEGV; not SIGTERM and the others.
bool is_java_fatal_signal(int signo);

// gProfiler's _proc_exit_callback for a profiled JVM's exit: a warning when it died of a signal,
// with cause profiled-signaled when that signal is fatal (an empty cause otherwise); nullopt
// when it exited without a signal.
std::optional<SafemodeVerdict> profiled_exit_verdict(const ProcExit& exit);

// Watches /dev/kmsg and the process events connector in a thread from construction to
// destruction, when one of `causes` is a kernel one. `warn` gets gProfiler's warnings (the
// watch's failure to start, each report about a profiled JVM); it is called from that thread.
class JavaSafemodeWatch {
 public:
  using Warn = std::function<void(const std::string&)>;
  JavaSafemodeWatch(std::vector<std::string> causes, std::string state_dir, Warn warn);
  ~JavaSafemodeWatch();
  JavaSafemodeWatch(const JavaSafemodeWatch&) = delete;
  JavaSafemodeWatch& operator=(const JavaSafemodeWatch&) = delete;

  // True when one of `causes` is decided by this watch.
  static bool needed(const std::vector<std::string>& causes);

 private:
  void run(std::stop_token stop);

  std::vector<std::string> causes_;
  std::string state_dir_;
  Warn warn_;
  std::jthread thread_;
};

}  // namespace gp::runtime
