#include "continuous_record.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "gp/profile/child.h"
#include "gp/profile/usage.h"

namespace gp::profile_tool {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kStopGrace = std::chrono::milliseconds(5000);  // gp-record closes its session
constexpr auto kPoll = std::chrono::milliseconds(20);
}  // namespace

ContinuousRecord::ContinuousRecord(std::string program, fs::path dir, Log& log)
    : program_(std::move(program)), dir_(std::move(dir)), log_(log) {}

ContinuousRecord::~ContinuousRecord() { stop(); }

Status ContinuousRecord::ensure_running(const gp::profile::Options& options) {
  if (pid_ != 0) {
    // Still there? A gp-record that exited since the last session is reaped and started again.
    auto w = gp::profile::wait_child(pid_, Clock::now(), nullptr);
    if (w.end != gp::profile::WaitEnd::exited) return ok_status();
    log_.warning(reaped(w.status) + ": starting it again");
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return make_error("cannot create '" + dir_.string() + "': " + ec.message());
  auto cmd = gp::profile::continuous_record_command(options, dir_.string());
  log_.info(2, gp::profile::describe(cmd));
  auto pid =
      gp::profile::spawn({program_, cmd.args, "/dev/null", (dir_ / "gp-record.err").string()});
  if (!pid) return pid.error();
  pid_ = *pid;
  started_ = Clock::now();
  exit_why_.clear();
  err_read_ = 0;  // the spawn truncated the file
  return ok_status();
}

void ContinuousRecord::restart_if_rss_exceeded(const MemoryGuard& guard) {
  if (!guard.on || pid_ == 0 || Clock::now() - started_ < guard.after) return;
  const uint64_t rss = gp::profile::resident_bytes(pid_);
  if (rss < guard.rss_limit) return;
  log_.warning("restarting gp-record: its memory exceeds the limit (resident " +
               std::to_string(rss >> 20) + " MiB, limit " + std::to_string(guard.rss_limit >> 20) +
               " MiB, after " + std::to_string(guard.after.count()) +
               " s; --perf-no-memory-restart turns this off)");
  stop();
}

std::string ContinuousRecord::last_link_target() const {
  std::error_code ec;
  fs::path target = fs::read_symlink(dir_ / "last_profile.gpa", ec);
  return ec ? std::string() : target.filename().string();
}

// gp-record was reaped: how it ended, with its last words.
std::string ContinuousRecord::reaped(const gp::profile::ExitInfo& status) {
  pid_ = 0;
  std::string why = "gp-record exited (" + status.describe();
  for (const auto& line : gp::profile::tail_lines((dir_ / "gp-record.err").string(), 2))
    why += "; " + line;
  return why + ")";
}

void ContinuousRecord::wait(Clock::time_point until, const std::atomic<bool>& stop_flag,
                            const std::function<void()>& tick) {
  if (pid_ == 0) return;
  auto w = gp::profile::wait_child(pid_, until, &stop_flag, tick);
  if (w.end == gp::profile::WaitEnd::exited) exit_why_ = reaped(w.status);
}

Result<std::string> ContinuousRecord::end_session(const std::atomic<bool>& stop_flag) {
  if (pid_ == 0) return make_error(exit_why_.empty() ? "gp-record is not running" : exit_why_);
  if (::kill(pid_, SIGUSR2) != 0)
    return make_error(std::string("cannot signal gp-record: ") + std::strerror(errno));
  // gp-record points last_profile.gpa at a session's file once the file is closed.
  const auto deadline = Clock::now() + kSwitchTimeout;
  for (;;) {
    std::string target = last_link_target();
    if (!target.empty() && target != taken_) {
      taken_ = target;
      remove_older_sessions(target);
      return (dir_ / target).string();
    }
    auto w = gp::profile::wait_child(pid_, std::min(deadline, Clock::now() + kPoll), &stop_flag);
    if (w.end == gp::profile::WaitEnd::stopped) return make_error("stopped");
    if (w.end == gp::profile::WaitEnd::exited) return make_error(reaped(w.status));
    if (Clock::now() >= deadline) {
      stop();
      return make_error("gp-record did not close its session within " +
                        std::to_string(kSwitchTimeout.count()) + " s: stopped");
    }
  }
}

// Finished session files older than `kept` that no session took (gp-record's safety-net
// duration ended them while gp-profile was busy): gone, as gProfiler keeps only perf's newest
// file. The file being written is newer than `kept`.
void ContinuousRecord::remove_older_sessions(const std::string& kept) {
  std::error_code ec;
  const auto kept_time = fs::last_write_time(dir_ / kept, ec);
  if (ec) return;
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".gpa" || p.filename() == kept || p.filename() == "last_profile.gpa")
      continue;
    std::error_code e;
    if (entry.is_regular_file(e) && fs::last_write_time(p, e) < kept_time && !e) stale.push_back(p);
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

std::vector<std::string> ContinuousRecord::new_problems() {
  std::vector<std::string> out;
  std::ifstream in(dir_ / "gp-record.err", std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(err_read_))) return out;
  std::string line;
  // Whole lines only: a line gp-record is still writing is read next time.
  while (std::getline(in, line) && !in.eof()) {
    err_read_ += line.size() + 1;
    for (std::string_view lead : {"gp-record: warning: ", "gp-record: error: "})
      if (line.rfind(lead, 0) == 0) out.push_back(line.substr(lead.size()));
  }
  return out;
}

void ContinuousRecord::release(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

void ContinuousRecord::stop() {
  if (pid_ == 0) return;
  gp::profile::kill_child(pid_, kStopGrace);
  pid_ = 0;
}

}  // namespace gp::profile_tool
