#pragma once
// Finding the processes gp-runtime profiles: which runtime a process runs, from its exe name and
// the runtime libraries it maps (reference/gprofiler.md §5), system-wide or for given pids, and
// the processes that start while a session runs.
//
// Everything reads <proc_root>/PID/{exe,comm,cmdline,maps,stat,environ}; files of the process
// itself are reached through /proc/PID/root so processes in containers work. Kernel threads,
// this process and its descendants (the profilers gp starts) are never targets; nor are the
// processes any other gp instance started (they carry kSpawnedEnv in their environment) and
// JDK tool launchers (jcmd, jfr, jps, ...: they load libjvm.so
// but are no Java applications), so that two overlapping sessions never profile each
// other's helpers.

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gp/runtime/adapter.h"
#include "gp/util/result.h"

namespace gp::runtime {

// The runtime of a process from its exe path and mapped file paths, or nullopt when it runs
// none gp knows: libjvm.so → java; libcoreclr.so → dotnet; exe python/python3/python3.X or a
// mapped libpython3.X → python; exe node/nodejs or libnode.so → node; exe ruby or libruby → ruby;
// exe php/php-fpm*/php-cgi* or libphp → php. `runtime_libraries` receives the matched paths.
std::optional<Runtime> classify_process(std::string_view exe,
                                        const std::vector<std::string>& mapped_paths,
                                        std::vector<std::string>* runtime_libraries = nullptr);

// The environment variable that marks a process as started by gp (value: "TOOL PID"); every
// profiler, jcmd and `--version` run gets it from run_profiler (subprocess.h).
inline constexpr const char* kSpawnedEnv = "GP_SPAWNED_BY";

// Why a process is gp's own helper rather than an application, or "" when it is not: started
// by a gp instance (kSpawnedEnv), or a JDK tool launcher (an exe other than java next to a java
// binary: .../bin/jcmd, .../bin/jfr).
std::string own_helper_reason(pid_t pid, std::string_view exe,
                              const std::string& proc_root = "/proc");

struct DiscoveryOptions {
  std::string proc_root = "/proc";
  std::set<Runtime> runtimes;  // the runtimes wanted; others are not reported
  // gProfiler's --php-proc-filter: a PHP process is a target only when this POSIX extended
  // regex matches somewhere in its comm (phpspy -P runs `pgrep <filter>`). Empty: every one.
  std::string php_proc_filter;
  // gProfiler's --python-pyspy-process: these pids are Python processes whatever their exe and
  // mappings (a renamed or embedded interpreter), when Python is wanted.
  std::set<pid_t> python_pids;
  // Processes never reported, with their descendants (default: this process).
  pid_t self = 0;  // 0 = getpid()
};

// Whether `filter` (a --php-proc-filter value) is a valid POSIX extended regex; the error names
// the problem.
Status check_php_proc_filter(const std::string& filter);
// pgrep's match: `filter` found anywhere in `comm`; an empty or invalid filter matches all.
bool php_proc_filter_matches(const std::string& filter, const std::string& comm);

// Why a pid given with --pids is not a target (for the tool's message).
struct Rejected {
  pid_t pid = 0;
  std::string reason;  // "no such process", "not a Java, Python, ... process (comm 'bash')"
};

// One look at a pid: a Target when it is a process of a wanted runtime. Error (message
// "no such process") when it does not exist; nullopt when it is not a target.
Result<std::optional<Target>> inspect_process(pid_t pid, const DiscoveryOptions& options);

// Watches a set of processes over a session: the first scan() returns every current target,
// later calls only the processes that are new since (started, or exec'd into a runtime). A
// process that is not (yet) a runtime is looked at again on the next few scans, because a JVM
// launcher maps libjvm.so only some milliseconds after exec (gProfiler retries 0.1-0.8 s).
class ProcessWatcher {
 public:
  // `pids` empty: the whole system; else only those pids (then never anything new).
  ProcessWatcher(DiscoveryOptions options, std::vector<pid_t> pids = {});
  std::vector<Target> scan();
  // The given pids that did not turn out as targets (after the first scan).
  const std::vector<Rejected>& rejected() const { return rejected_; }

 private:
  struct Seen {
    unsigned long long start_ticks = 0;
    int looks = 0;
    bool target = false;
  };
  bool is_own(pid_t pid, std::map<pid_t, pid_t>& parents) const;
  std::optional<Target> look(pid_t pid, unsigned long long start_ticks);

  DiscoveryOptions options_;
  std::vector<pid_t> pids_;
  std::map<pid_t, Seen> seen_;
  std::vector<Rejected> rejected_;
  bool first_ = true;
};

// Helpers shared with the driver and appids (all read through <proc_root>/PID).
std::vector<std::string> read_cmdline(pid_t pid, const std::string& proc_root = "/proc");
std::string read_comm(pid_t pid, const std::string& proc_root = "/proc");
// Parent pid and start time (clock ticks after boot) from /proc/PID/stat; nullopt when gone.
struct StatInfo {
  pid_t ppid = 0;
  unsigned long long start_ticks = 0;
  bool kernel_thread = false;
  // In do_exit (PF_EXITING): its memory may be gone already while the state still reads R or
  // D, before it becomes a zombie.
  bool exiting = false;
  char state = '?';
};
std::optional<StatInfo> read_stat(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace gp::runtime
