#pragma once
// ContinuousRecord: the system recorder of a continuous run, kept across sessions as gProfiler
// keeps perf (gprofiler.md §3.3): one `gp-record -c --output-dir DIR`, told by SIGUSR2 to end
// each session (perf's --switch-output=signal). Its BPF program, unwind tables and process
// snapshots stay in place from one session to the next, and no sample falls between two
// sessions: the time gp-profile spends merging, folding and uploading one session is recorded in
// the next. A gp-record that died is started again at the next session.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gp/profile/child.h"
#include "gp/profile/plan.h"
#include "gp/util/result.h"
#include "log.h"

namespace gp::profile_tool {

// gProfiler's guard on perf's memory (perf_process.py, restart_if_rss_exceeded, checked as each
// session starts): a recorder that has run `after` and holds `rss_limit` bytes resident is
// started again, so that what it accumulates (process snapshots, unwind tables, caches) cannot
// grow without bound on a long-running node. Off with --perf-no-memory-restart.
struct MemoryGuard {
  bool on = true;
  std::chrono::seconds after{3600};
  uint64_t rss_limit = 512ull << 20;
};

class ContinuousRecord {
 public:
  // program: gp-record's path; dir: a private directory for its session files (created).
  ContinuousRecord(std::string program, std::filesystem::path dir, Log& log);
  ~ContinuousRecord();  // stops gp-record
  ContinuousRecord(const ContinuousRecord&) = delete;
  ContinuousRecord& operator=(const ContinuousRecord&) = delete;

  // Starts gp-record with `options` unless it is running. Its stderr goes to DIR/gp-record.err.
  Status ensure_running(const gp::profile::Options& options);
  // Stops gp-record (ensure_running starts it again) when `guard` says its memory is too much.
  void restart_if_rss_exceeded(const MemoryGuard& guard);
  // The session's length: until `until` or `stop`, `tick` about once a second. Returns early
  // when gp-record exits (end_session then says why).
  void wait(std::chrono::steady_clock::time_point until, const std::atomic<bool>& stop,
            const std::function<void()>& tick);
  // Ends the current session: SIGUSR2, then waits for gp-record to close the session's file
  // (kSwitchTimeout at most, or until `stop`). Returns the file, which the caller passes to
  // release() when done with it; an error when gp-record is gone or did not answer (it is then
  // stopped, and started again by the next ensure_running).
  Result<std::string> end_session(const std::atomic<bool>& stop);
  // Removes a session file end_session returned.
  void release(const std::string& path);
  // The warnings and errors gp-record wrote since the last call ("gp-record: warning: X": "X"),
  // for the session that just ended.
  std::vector<std::string> new_problems();
  // Stops gp-record (SIGTERM to its group: it closes its session), if it runs.
  void stop();
  bool running() const { return pid_ != 0; }

  // gp-record's final drain and its session's kallsyms and perf maps take a second or two.
  static constexpr std::chrono::seconds kSwitchTimeout{60};

 private:
  std::string last_link_target() const;
  std::string reaped(const gp::profile::ExitInfo& status);
  void remove_older_sessions(const std::string& kept);

  std::string program_;
  std::filesystem::path dir_;
  Log& log_;
  pid_t pid_ = 0;
  std::chrono::steady_clock::time_point started_;
  uint64_t err_read_ = 0;  // bytes of gp-record.err new_problems() has read
  std::string taken_;
  std::string exit_why_;  // how gp-record ended, when wait() saw it go      // the last session
                          // file end_session returned (its name in dir_)
};

}  // namespace gp::profile_tool
