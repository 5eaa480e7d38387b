#pragma once
// Snapshots of live processes from procfs, for gp-record and gp-runtime: what symbolization and
// attribution need later on another host (DESIGN.md §1, "self-sufficient for off-host work").
//
// Everything reads <proc_root>/PID/... (proc_root is "/proc" except in tests). Paths inside the
// process (exe, mapping paths) are in the process's mount namespace, as the kernel prints them;
// files are opened through /proc/PID/map_files and /proc/PID/root so containers work. Reading
// other users' processes needs root (or CAP_SYS_PTRACE + CAP_DAC_READ_SEARCH); without it the
// fields that could not be read stay empty rather than failing the snapshot.
//
// Thread-safety: the free functions are reentrant; a BuildIdCache must not be shared between
// threads without external locking.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::proc {

struct SnapshotOptions {
  // Replace secret-looking argument values (see gp/proc/cmdline.h for the rule).
  bool redact_cmdline = false;
  // Root of the procfs to read; tests point it at a fake tree.
  std::string proc_root = "/proc";
  // Look container names up in the runtimes' state files (gp/proc/container.h).
  bool resolve_container_names = true;
  // Prefix for those state files ("" = this mount namespace's "/"; "/proc/1/root" when the
  // recorder runs in a container that shares the host's pid namespace).
  std::string host_root;
};

// Metadata of one process: comm, exe, cmdline, ppid, uid (real), start time (wall clock ns since
// the epoch: boot time + starttime ticks), ns_pid (last NSpid value), cgroup (the v2 "0::" path,
// else the first v1 line's path), container id and name (gp/proc/container.h).
// Error only when the process does not exist (message contains "process exited": the pid is gone,
// or it is a zombie; a zombie leader whose other threads still run counts as alive and its exe
// and cmdline are read through a live thread). Other unreadable fields stay empty.
Result<model::Process> snapshot_process(int32_t pid, const SnapshotOptions& options = {});

// False when pid is gone or exited (the rule of snapshot_process: a zombie that no live thread
// keeps); true while it lives, and when /proc/PID/stat cannot be read for another reason.
bool process_alive(int32_t pid, const std::string& proc_root = "/proc");

// The start time of a live process or thread (/proc/PID/stat's starttime, clock ticks after
// boot): with its pid, what tells it from a later process that took the pid. An error when it is
// gone (or a zombie no live thread keeps).
Result<uint64_t> process_start_ticks(int32_t pid, const std::string& proc_root = "/proc");

// The wall-clock time (ns since the epoch) of a starttime in clock ticks after boot.
int64_t start_ticks_to_wall_ns(uint64_t start_ticks);

// How long ago the process started (CLOCK_BOOTTIME now minus its starttime); an error when it
// is gone or its stat cannot be read.
Result<std::chrono::nanoseconds> process_age(int32_t pid, const std::string& proc_root = "/proc");

// The CPU time the process has used (utime + stime of /proc/PID/stat); an error when it is gone.
Result<std::chrono::nanoseconds> process_cpu_time(int32_t pid,
                                                  const std::string& proc_root = "/proc");

// Build-ids keyed by file identity (st_dev, st_ino, size, mtime) as seen through
// /proc/PID/map_files, so a library shared by hundreds of processes is parsed once per
// recording; size and mtime guard against inode reuse after a file is replaced. Negative results
// (no build-id) are cached too.
class BuildIdCache {
 public:
  // Looks up or reads the build-id of the file open on fd (raw bytes, "" when none/unreadable).
  std::string get(int fd);
  // Same for a path (followed, as /proc/PID/map_files links must be): stat first, and open
  // only on a miss. nullopt when the path cannot be stat'ed or opened (try another path).
  std::optional<std::string> get(const std::string& path);
  size_t size() const { return entries_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  // The vDSO's build-id read before for an image of `size` bytes, or nullptr. Every process of
  // one kernel maps the same vDSO (a compat 32-bit one has another size): read once, not from
  // each new process's memory.
  const std::string* vdso(uint64_t size) const;
  void set_vdso(uint64_t size, std::string build_id) { vdso_[size] = std::move(build_id); }

 private:
  using Key = std::tuple<uint64_t, uint64_t, int64_t, int64_t, int64_t>;
  std::map<Key, std::string> entries_;
  std::map<uint64_t, std::string> vdso_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

// Every executable mapping of pid from /proc/PID/maps, in address order: start/end/offset,
// dev (makedev of the maps major:minor), inode, path exactly as maps prints it (including a
// " (deleted)" suffix), kind (user for files, vdso for [vdso]/[vsyscall], anonymous for anonymous
// executable memory; jit_map is decided later by the perf-map code), and build-id read through
// /proc/PID/map_files/<start>-<end> (works for deleted files and other mount namespaces),
// falling back to /proc/PID/root/<path>. The vDSO's build-id is read from /proc/PID/mem.
// `cache` may be null; pass one cache for a whole system-wide snapshot.
// A process whose main thread exited while others run (a zombie leader) is read through a live
// thread's /proc/PID/task/TID files; map_files does not exist there, so deleted files have no
// build-id in that rare case. Kernel threads have no mappings (empty list).
// Error when the process does not exist (message contains "process exited").
Result<std::vector<model::Mapping>> executable_mappings(int32_t pid,
                                                        const SnapshotOptions& options = {},
                                                        BuildIdCache* cache = nullptr);

// True while the dynamic loader may still be mapping a process's libraries: the loader is among
// its mappings and the C library is not yet (it comes after the executable's other dependencies:
// xz maps liblzma, then libc). A dynamic program without libc stays "still mapping": callers
// bound how often they look again.
bool loader_still_mapping(const std::vector<model::Mapping>& mappings);

// Every process (thread-group) id in <proc_root>, ascending. Threads are not listed: procfs
// shows them only under /proc/PID/task. Empty when proc_root cannot be read.
std::vector<int32_t> list_processes(const std::string& proc_root = "/proc");

// The recording host: hostname, boot id, uname release/version/machine, kernel build-id
// (from /sys/kernel/notes, raw bytes), online cpu count, PRETTY_NAME of /etc/os-release.
// Fields that cannot be read stay empty/0.
model::HostInfo host_info();

}  // namespace gp::proc
