// First signal: stop the session; second: die by it (signals.h).
#include "signals.h"

#include "gp/cli/tool.h"
#include "gp/runtime/work_dir.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>

namespace gp::runtime_tool {
namespace {

std::atomic<int> g_count{0};

}  // namespace

SignalWatcher::SignalWatcher(std::stop_source on_first) {
  sigset_t set = gp::cli::stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::jthread([set, on_first](std::stop_token done) mutable {
    const timespec tick{0, 100 * 1000 * 1000};
    while (!done.stop_requested()) {
      int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig <= 0) continue;
      if (g_count.fetch_add(1) == 0) {
        on_first.request_stop();
        continue;
      }
      // Second signal: die by it, as an interrupted command should, without leaving the work
      // directory behind (destructors do not run).
      runtime::WorkDir::remove_live();
      signal(sig, SIG_DFL);
      pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
      raise(sig);
    }
  });
}

SignalWatcher::~SignalWatcher() {
  thread_.request_stop();
  thread_.join();
}

bool SignalWatcher::signalled() const { return g_count.load() > 0; }

}  // namespace gp::runtime_tool
