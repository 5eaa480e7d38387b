#pragma once
// The clock of gp's own samplers (CPython, Ruby): call a snapshot every 1/hz s for a duration
// or until stop is requested, without making up late ticks with a burst; and facts about the
// target's threads (name, on a CPU, tid as gp sees it). Shared by the gp-python and gp-ruby
// adapters.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <unordered_map>

namespace gp::runtime::remote {

// Sleeps until `when` or until stop is requested; false when stopped.
bool sleep_until(std::chrono::steady_clock::time_point when, std::stop_token stop);

// Calls tick() every 1/hz s (hz >= 1) for `duration`, or until stop or until tick() returns
// false. A late tick (the machine was busy) is not made up with a burst.
template <typename Tick>
void every_tick(int hz, std::chrono::milliseconds duration, std::stop_token stop, Tick&& tick) {
  using clock = std::chrono::steady_clock;
  const auto period = std::chrono::microseconds(1000000 / hz);
  const auto end = clock::now() + duration;
  for (auto at = clock::now(); at < end; at += period) {
    if (!sleep_until(at, stop)) return;
    if (!tick()) return;
    if (auto now = clock::now(); now > at + period) at = now - period;
  }
}

// /proc/PID/task/TID/comm without its newline; empty when unknown.
std::string thread_name(pid_t pid, int32_t tid);

// True when the kernel has the thread running or runnable (state R in /proc/PID/task/TID/stat),
// as rbspy's --oncpu decides; nullopt-like false when it cannot be read.
bool thread_on_cpu(pid_t pid, int32_t tid);

// The tids gp sees (its own pid namespace's) of the process's threads, keyed by the tids the
// process sees in its own pid namespace (what an interpreter records, e.g. Ruby's
// rb_thread_t.tid): the first and last NSpid fields of /proc/PID/task/TID/status. Equal keys and
// values for a process in gp's namespace; empty when the process is gone.
std::unordered_map<int32_t, int32_t> namespace_tids(pid_t pid);

}  // namespace gp::runtime::remote
