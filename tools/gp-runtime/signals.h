#pragma once
// SIGINT/SIGTERM for gp-runtime: the first ends the session normally (profilers stop, the archive
// is written, exit 0), a second one kills gp-runtime at once (its profilers die with it through
// PR_SET_PDEATHSIG). The signals are blocked in every thread and taken by one watcher thread, so
// adapters never see EINTR.

#include <stop_token>
#include <thread>

namespace gp::runtime_tool {

class SignalWatcher {
 public:
  // Call before any other thread starts (they inherit the blocked mask).
  explicit SignalWatcher(std::stop_source on_first);
  ~SignalWatcher();
  bool signalled() const;

 private:
  std::jthread thread_;
};

}  // namespace gp::runtime_tool
