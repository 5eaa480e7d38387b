// snapshot_process: one process's metadata from procfs.

#include "gp/proc/process.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <ctime>

#include "gp/proc/cmdline.h"
#include "gp/proc/container.h"
#include "proc/proc_files.h"

namespace gp::proc {
namespace {

constexpr size_t kMaxCmdline = 1 << 20;

Error exited_error(int32_t pid) { return make_error("process " + std::to_string(pid) + " exited"); }

// Wall-clock time of boot in ns: starttime in /proc/PID/stat counts from boot (CLOCK_BOOTTIME,
// which includes suspend), so REALTIME - BOOTTIME is the offset to add.
int64_t boot_time_ns() {
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  return (real.tv_sec - boot.tv_sec) * 1'000'000'000LL + (real.tv_nsec - boot.tv_nsec);
}

struct StatFields {
  char state = '?';
  int32_t ppid = 0;
  uint64_t start_ticks = 0;
  uint64_t cpu_ticks = 0;  // utime + stime
  std::string comm;
};

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22) ..."; comm may contain ") ", so the
// fields start after the LAST ')'.
bool parse_stat(std::string_view text, StatFields& out) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return false;
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  const std::vector<std::string> f = split(text.substr(std::min(close + 2, text.size())), ' ');
  // f[0] is field 3 (state), so field N is f[N - 3].
  if (f.size() < 20 || f[0].empty()) return false;
  out.state = f[0][0];
  uint64_t ppid = 0;
  uint64_t utime = 0, stime = 0;
  if (!parse_u64(f[1], ppid) || !parse_u64(f[19], out.start_ticks) || !parse_u64(f[11], utime) ||
      !parse_u64(f[12], stime))
    return false;
  out.cpu_ticks = utime + stime;
  out.ppid = static_cast<int32_t>(ppid);
  return true;
}

// A zombie thread-group leader whose other threads still run (the main thread called
// pthread_exit) is a live process; its "Threads:" count says so.
uint64_t live_threads(const std::string& dir) {
  auto status = read_file(dir + "/status", 64 * 1024);
  if (!status) return 0;
  for (const std::string& line : split(*status, '\n')) {
    uint64_t n = 0;
    if (line.rfind("Threads:", 0) != 0) continue;
    const size_t at = line.find_first_not_of(" \t", 8);
    return at != std::string::npos && parse_u64(line.substr(at), n) ? n : 0;
  }
  return 0;
}

// Uid (real) and NSpid (innermost namespace = last value) from /proc/PID/status.
void parse_status(std::string_view text, model::Process& p) {
  for (const std::string& line : split(text, '\n')) {
    if (line.rfind("Uid:", 0) == 0) {
      uint64_t uid = 0;
      const std::vector<std::string> v = split(std::string_view(line).substr(4), '\t');
      for (const std::string& s : v) {
        if (!s.empty() && parse_u64(s, uid)) {
          p.uid = static_cast<uint32_t>(uid);
          break;
        }
      }
    } else if (line.rfind("NSpid:", 0) == 0) {
      const std::vector<std::string> v = split(std::string_view(line).substr(6), '\t');
      uint64_t ns = 0;
      if (!v.empty() && parse_u64(v.back(), ns)) p.ns_pid = static_cast<int32_t>(ns);
    }
  }
}

// The cgroup v2 path ("0::/..."); on v1-only hosts the path of the first line.
std::string parse_cgroup(std::string_view text) {
  std::string first;
  for (const std::string& line : split(text, '\n')) {
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    std::string path = line.substr(c2 + 1);
    if (line.compare(0, c2 + 1, "0::") == 0) return path;
    if (first.empty()) first = std::move(path);
  }
  return first;
}

// v1 hosts have one path per controller and not all of them name the container.
ContainerRef container_from_cgroup_file(std::string_view text, const std::string& chosen) {
  ContainerRef ref = container_from_cgroup(chosen);
  if (!ref.id.empty()) return ref;
  for (const std::string& line : split(text, '\n')) {
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    ref = container_from_cgroup(std::string_view(line).substr(c2 + 1));
    if (!ref.id.empty()) return ref;
  }
  return {};
}

// NUL-separated argv; empty arguments in the middle are kept ("" is a real argument).
std::vector<std::string> parse_cmdline(std::string_view raw) {
  if (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::vector<std::string> out;
  if (raw.empty()) return out;
  size_t pos = 0;
  while (true) {
    const size_t end = raw.find('\0', pos);
    if (end == std::string_view::npos) {
      out.emplace_back(raw.substr(pos));
      return out;
    }
    out.emplace_back(raw.substr(pos, end - pos));
    pos = end + 1;
  }
}

void fill_optional_fields(const std::string& dir, const std::string& mm_dir,
                          const SnapshotOptions& options, model::Process& p) {
  // exe and cmdline come from mm_dir: the address space, which a zombie leader no longer has.
  std::string exe(4096, '\0');
  const ssize_t n = ::readlink((mm_dir + "/exe").c_str(), exe.data(), exe.size());
  if (n > 0) p.exe = exe.substr(0, static_cast<size_t>(n));
  if (auto cmd = read_file(mm_dir + "/cmdline", kMaxCmdline)) {
    p.cmdline = parse_cmdline(*cmd);
    if (options.redact_cmdline) p.cmdline = redact_cmdline(p.cmdline);
  }
  if (auto status = read_file(dir + "/status", 64 * 1024)) parse_status(*status, p);
  if (auto cg = read_file(dir + "/cgroup", 64 * 1024)) {
    p.cgroup = parse_cgroup(*cg);
    const ContainerRef ref = container_from_cgroup_file(*cg, p.cgroup);
    p.container_id = ref.id;
    if (options.resolve_container_names && !ref.id.empty()) {
      p.container_name = resolve_container_name(ref, options.host_root);
    }
  }
}

// The stat fields of a live process; an Error saying "exited" when it is gone or a zombie that
// no live thread keeps.
Result<StatFields> live_stat(const std::string& dir, int32_t pid) {
  int err = 0;
  auto stat_text = read_file(dir + "/stat", 4096, &err);
  if (!stat_text) {
    if (is_gone_errno(err)) return exited_error(pid);
    return make_error("cannot read '" + dir + "/stat': " + stat_text.error().message);
  }
  StatFields st;
  if (!parse_stat(*stat_text, st)) return make_error("cannot parse '" + dir + "/stat'");
  if ((st.state == 'Z' || st.state == 'X') && live_threads(dir) <= 1) {
    return make_error("process " + std::to_string(pid) + " exited (zombie)");
  }
  return st;
}

}  // namespace

std::vector<int32_t> list_processes(const std::string& proc_root) {
  std::vector<int32_t> pids;
  DIR* dir = ::opendir(proc_root.c_str());
  if (!dir) return pids;
  while (dirent* e = ::readdir(dir)) {
    uint64_t pid = 0;
    if (parse_u64(e->d_name, pid) && pid > 0 && pid <= INT32_MAX)
      pids.push_back(static_cast<int32_t>(pid));
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

bool process_alive(int32_t pid, const std::string& proc_root) {
  auto st = live_stat(proc_root + "/" + std::to_string(pid), pid);
  return st || st.error().message.find("exited") == std::string::npos;
}

Result<std::chrono::nanoseconds> process_age(int32_t pid, const std::string& proc_root) {
  auto st = live_stat(proc_root + "/" + std::to_string(pid), pid);
  if (!st) return st.error();
  const long ticks = sysconf(_SC_CLK_TCK);
  timespec boot{};
  clock_gettime(CLOCK_BOOTTIME, &boot);
  const int64_t now_ns = boot.tv_sec * 1'000'000'000LL + boot.tv_nsec;
  const int64_t start_ns =
      static_cast<int64_t>(st->start_ticks) * (1'000'000'000LL / (ticks > 0 ? ticks : 100));
  return std::chrono::nanoseconds(std::max<int64_t>(0, now_ns - start_ns));
}

Result<uint64_t> process_start_ticks(int32_t pid, const std::string& proc_root) {
  auto st = live_stat(proc_root + "/" + std::to_string(pid), pid);
  if (!st) return st.error();
  return st->start_ticks;
}

int64_t start_ticks_to_wall_ns(uint64_t start_ticks) {
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return 0;
  return boot_time_ns() + static_cast<int64_t>(start_ticks) * (1'000'000'000LL / ticks);
}

Result<std::chrono::nanoseconds> process_cpu_time(int32_t pid, const std::string& proc_root) {
  auto st = live_stat(proc_root + "/" + std::to_string(pid), pid);
  if (!st) return st.error();
  const long ticks = sysconf(_SC_CLK_TCK);
  return std::chrono::nanoseconds(static_cast<int64_t>(st->cpu_ticks) *
                                  (1'000'000'000LL / (ticks > 0 ? ticks : 100)));
}

Result<model::Process> snapshot_process(int32_t pid, const SnapshotOptions& options) {
  const std::string dir = options.proc_root + "/" + std::to_string(pid);
  auto stat = live_stat(dir, pid);
  if (!stat) return stat.error();
  const StatFields& st = *stat;

  model::Process p;
  p.pid = pid;
  p.ns_pid = pid;
  p.ppid = st.ppid;
  p.comm = st.comm;  // /proc/PID/comm has the same text (both are proc_task_name's)
  p.start_time_ns = start_ticks_to_wall_ns(st.start_ticks);
  fill_optional_fields(dir, st.state == 'Z' ? memory_dir(dir, pid) : dir, options, p);
  // Gone while we read (stat succeeded but everything else vanished): report it as exited.
  if (::access(dir.c_str(), F_OK) != 0 && is_gone_errno(errno)) return exited_error(pid);
  return p;
}

}  // namespace gp::proc
