#pragma once
// UnwindAnnouncer (--unwind): the new processes the BPF program announces on its own ring
// (unwind_events), read and handed to the unwinder on a thread of their own, and their execs,
// in the ring's order: an exec's old tables are dropped before the new image's first sample
// asks for its own (the recorder's thread hears of an exec at its next wake-up, which on a
// loaded host came a hundred milliseconds later: dropping them then dropped the new image's).
// The recorder's thread snapshots them too, but a flush there (tens of milliseconds on a loaded
// host) would hold a short process's tables back meanwhile: its samples would take frame
// pointers. While ld.so is still mapping a process's libraries (no libc yet), its mappings are
// read again every 2 ms, as the recorder does. The thread sleeps until an announcement, a
// look-again or the stop: a periodic wake-up (20 a second) cost as much CPU as the rest of the
// recorder.

#include <bpf/libbpf.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>

#include "gp/proc/process.h"
#include "gp/proc/unique_fd.h"
#include "sampler.h"

namespace gp::record_tool {

class UnwindAnnouncer {
 public:
  // ring: the loaded program's unwind_events map. Error when its reader cannot be set up.
  static Result<std::unique_ptr<UnwindAnnouncer>> start(bpf_map* ring, Unwinder& unwinder);
  ~UnwindAnnouncer();  // stops and joins the thread
  UnwindAnnouncer(const UnwindAnnouncer&) = delete;
  UnwindAnnouncer& operator=(const UnwindAnnouncer&) = delete;

  static constexpr auto kLookAgain = std::chrono::milliseconds(2);
  static constexpr int kMaxReads = 100;

 private:
  explicit UnwindAnnouncer(Unwinder& unwinder) : unwinder_(unwinder) {}
  static int on_event(void* ctx, void* data, size_t size);
  void wait(int timeout_ms);
  void read(int32_t pid, int reads);
  void run();

  struct LookAgain {
    std::chrono::steady_clock::time_point due;
    int32_t pid;
    int reads;
  };
  Unwinder& unwinder_;
  struct RingDeleter {
    void operator()(ring_buffer* r) const { ring_buffer__free(r); }
  };
  std::unique_ptr<ring_buffer, RingDeleter> ring_;
  proc::UniqueFd stop_event_;    // an eventfd, written by the destructor
  proc::UniqueFd wait_set_;      // epoll: the ring's epoll set and stop_event_
  proc::BuildIdCache cache_;     // this thread's own
  std::deque<LookAgain> again_;  // in due order (every entry has the same delay)
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started when everything it uses exists
};

}  // namespace gp::record_tool
