// gProfiler's kernel-reported Java safemode causes (see java_safemode_watch.h).
#include "gp/runtime/java_safemode_watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "gp/runtime/kernel_log.h"
#include "safemode.h"

namespace gp::runtime {
namespace {

std::string about(const KernelEvent& e) {
  return " (pid " + std::to_string(e.pid) + ", comm " + e.comm + ")";
}

bool has(const std::vector<std::string>& causes, std::string_view cause) {
  return std::find(causes.begin(), causes.end(), cause) != causes.end();
}

}  // namespace

std::optional<SafemodeVerdict> kernel_message_verdict(
    std::string_view message, const std::function<bool(int)>& profiled,
    const std::function<std::vector<int>()>& profiled_pids) {
  auto event = parse_kernel_event(message);
  if (event && profiled(event->pid)) {
    if (event->kind == KernelEventKind::oom_kill)
      return SafemodeVerdict{"profiled-oom", "Profiled Java process OOM" + about(*event)};
    return SafemodeVerdict{"profiled-signaled",
                           "Profiled Java process fatally signaled" + about(*event)};
  }
  // gProfiler's "paranoia": any OOM kill or fatal fault, or a profiled pid's digits anywhere in
  // the line (a substring test, as gProfiler's `str(p) in text`).
  if (event && event->kind == KernelEventKind::oom_kill)
    return SafemodeVerdict{"general-oom", "General OOM" + about(*event)};
  if (event) return SafemodeVerdict{"general-signaled", "General signal" + about(*event)};
  for (int pid : profiled_pids()) {
    if (message.find(std::to_string(pid)) != std::string_view::npos)
      return SafemodeVerdict{"pid-in-kernel-messages",
                             "Profiled PID shows in kernel message line: " + std::string(message)};
  }
  return std::nullopt;
}

int java_exit_signal(uint32_t exit_code) {
  auto status = static_cast<int>(exit_code);
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  if (exit_code == 0x8F00) return SIGTERM;  // the JVM's exit status 143 after SIGTERM
  return 0;
}

bool is_java_fatal_signal(int signo) {
  return signo == SIGABRT || signo == SIGKILL || signo == SIGSEGV;
}

std::optional<SafemodeVerdict> profiled_exit_verdict(const ProcExit& exit) {
  int signo = java_exit_signal(exit.exit_code);
  if (signo == 0) return std::nullopt;
  return SafemodeVerdict{is_java_fatal_signal(signo) ? "profiled-signaled" : "",
                         "async-profiled Java process exited with signal (pid " +
                             std::to_string(exit.pid) + ", signal " + std::to_string(signo) + ")"};
}

bool JavaSafemodeWatch::needed(const std::vector<std::string>& causes) {
  for (std::string_view cause : {"profiled-oom", "profiled-signaled", "general-oom",
                                 "general-signaled", "pid-in-kernel-messages"})
    if (has(causes, cause)) return true;
  return false;
}

JavaSafemodeWatch::JavaSafemodeWatch(std::vector<std::string> causes, std::string state_dir,
                                     Warn warn)
    : causes_(std::move(causes)), state_dir_(std::move(state_dir)), warn_(std::move(warn)) {
  if (needed(causes_)) thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

JavaSafemodeWatch::~JavaSafemodeWatch() = default;  // the jthread stops and joins

void JavaSafemodeWatch::run(std::stop_token stop) {
  auto log = KernelLog::open();
  if (!log)
    warn_(
        "Failed to start kernel messages listener. Profilee error monitoring via kernel "
        "messages is not available (this does not prevent profiling). Do you have permission "
        "to read /dev/kmsg? (" +
        log.error().message + ")");
  auto exits = ProcExits::open();
  if (!exits)
    warn_(
        "Failed to enable proc_events listener for exited Java processes (this does not "
        "prevent Java profiling): " +
        exits.error().message);
  if (!log && !exits) return;

  SessionParams params;
  params.java_safemode = causes_;
  params.java_safemode_state = state_dir_;
  auto disable = [&](const std::string& cause) {
    Profile ignored;  // gp-profile says that Java profiling is off from the state, once
    if (!cause.empty()) java::safemode_disable(params, cause, ignored);
  };
  // As gProfiler, profiled pids are known only while process exits are seen (else a pid of a
  // JVM long gone, now another process's, would count).
  auto profiled = [&](int pid) {
    struct stat st {};
    return exits && ::stat(java::profiled_jvm_marker(state_dir_, pid).c_str(), &st) == 0;
  };
  auto profiled_pids = [&] {
    std::vector<int> pids;
    std::error_code ec;
    if (!exits || !has(causes_, "pid-in-kernel-messages")) return pids;
    for (const auto& e : std::filesystem::directory_iterator(state_dir_ + "/profiled", ec))
      pids.push_back(std::atoi(e.path().filename().c_str()));
    return pids;
  };
  auto on_message = [&](std::string_view message) {
    if (auto verdict = kernel_message_verdict(message, profiled, profiled_pids)) {
      warn_(verdict->warning);
      disable(verdict->cause);
    }
  };
  auto on_exit = [&](const ProcExit& exit) {
    // The main thread's exit stands for the process's (gProfiler checks the tid).
    if (exit.tid != exit.pid || !profiled(exit.pid)) return;
    ::unlink(java::profiled_jvm_marker(state_dir_, exit.pid).c_str());
    if (auto verdict = profiled_exit_verdict(exit)) {
      warn_(verdict->warning);
      disable(verdict->cause);
    }
  };
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{log ? log->fd() : -1, POLLIN, 0}, {exits ? exits->fd() : -1, POLLIN, 0}};
    ::poll(fds, 2, 200);
    // The kernel log first: the OOM killer logs its kill before the process exits, so an
    // OOM-killed JVM is profiled-oom, not the profiled-signaled of its SIGKILL exit.
    if (log && log->read_new(on_message) > 0) warn_("Missed some kernel messages.");
    if (exits && !exits->read_new(on_exit)) {
      warn_(
          "Failed to read the process events connector: exits of profiled JVMs are no longer "
          "seen");
      exits = Error{"failed"};
    }
  }
}

}  // namespace gp::runtime
