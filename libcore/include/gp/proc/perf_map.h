#pragma once
// Copies of JIT perf maps (/tmp/perf-<pid>.map, written by Node --perf-basic-prof, JVM agents,
// Python 3.12 -X perf, .NET DOTNET_PerfMapEnabled) for off-host symbolization of JIT frames.
//
// The recorder runs as root and the file lives in a directory every user can write, inside the
// target's mount namespace, so opening it is done defensively:
//  - the path is walked with openat from /proc/PID/root without following any symlink
//    (O_NOFOLLOW on every component, "tmp" included), so a link planted in /tmp cannot make root
//    read another file;
//  - the file must be a regular file (O_NONBLOCK so a FIFO cannot block us; fstat checks the type)
//    owned by one of the process's uids (real, effective, saved, fs) -- root's files only for a
//    process running as root --, with a single link (a hard link to someone else's file would
//    otherwise pass), on the same mount as the /tmp it was found in (a user with their own mount
//    namespace can bind-mount any file they can reach over the map's name);
//  - at most max_bytes are read; a longer file is cut at the last complete line before the cap.
// Lines are "START SIZE NAME" with START and SIZE in hex (optional 0x); bad lines are skipped
// and counted. NAME is kept verbatim (it may contain spaces).

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::proc {

struct PerfMapStats {
  bool truncated = false;  // the file was longer than max_bytes
  size_t bad_lines = 0;    // lines that did not parse
  size_t bytes_read = 0;
  uint64_t next_offset = 0;  // where the next tail read starts: after the last whole line read
  bool rewritten = false;    // shorter than from_offset: read again from the start
};

inline constexpr size_t kDefaultPerfMapMaxBytes = 64u << 20;

// pid is the process in the recorder's pid namespace (for /proc/PID/root and the owner check);
// ns_pid is its pid inside its own namespace, which names the file. The JitMap's path is the
// in-namespace path "/tmp/perf-<ns_pid>.map". `proc_root` is "/proc" except in tests.
// Errors: no such file ("not found" in the message), refused (symlink, not regular, wrong owner),
// unreadable. `stats` may be null. Only whole lines are read (a line being written is left for
// later). Perf maps only grow: from_offset (a previous read's next_offset) reads what was
// appended since, and the whole file again when it is shorter than that (rewritten).
Result<model::JitMap> copy_perf_map(int32_t pid, int32_t ns_pid,
                                    size_t max_bytes = kDefaultPerfMapMaxBytes,
                                    PerfMapStats* stats = nullptr,
                                    const std::string& proc_root = "/proc",
                                    uint64_t from_offset = 0);

// A process's /tmp held open (O_PATH), so that its perf map can still be read after the process
// exits and its /proc/PID/root goes with it (a container's /tmp may be unreachable otherwise).
class TmpDir {
 public:
  explicit TmpDir(int fd) : fd_(fd) {}
  TmpDir(const TmpDir&) = delete;
  TmpDir& operator=(const TmpDir&) = delete;
  ~TmpDir();
  int fd() const { return fd_; }

 private:
  int fd_;
};

// What tells two processes' /tmp apart: the directory itself (device and inode), as their
// root and mounts show it now (a tmpfs mounted on a container's /tmp is another directory).
struct TmpDirIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
  auto operator<=>(const TmpDirIdentity&) const = default;
};

// One lstat, no descriptor: processes with equal identities can share one TmpDir.
Result<TmpDirIdentity> tmp_dir_identity(int32_t pid, const std::string& proc_root = "/proc");
// Opens pid's /tmp through /proc/PID/root without following a symlink below the root.
Result<std::shared_ptr<TmpDir>> open_tmp_dir(int32_t pid, const std::string& proc_root = "/proc");
// The uids a perf map of pid may belong to (real, effective, saved, fs).
Result<std::set<uint32_t>> process_uids(int32_t pid, const std::string& proc_root = "/proc");

// copy_perf_map for a process that may have exited: its /tmp and uids as held from a time it
// lived. Same rules and errors.
Result<model::JitMap> copy_perf_map_in(const TmpDir& tmp, const std::set<uint32_t>& uids,
                                       int32_t pid, int32_t ns_pid,
                                       size_t max_bytes = kDefaultPerfMapMaxBytes,
                                       PerfMapStats* stats = nullptr, uint64_t from_offset = 0);

// Marks the anonymous mappings (MappingKind::anonymous) of map.pid that contain the start of
// at least one perf-map entry as MappingKind::jit_map, so symbolizers know to use the map.
// Mappings of other pids and file-backed mappings are left alone. Returns how many changed.
size_t mark_jit_mappings(std::vector<model::Mapping>& mappings, const model::JitMap& map);

// Parses perf-map text (the same line rules), appending to map.entries. Returns the number of
// bad lines.
size_t parse_perf_map(std::string_view text, model::JitMap& map);

}  // namespace gp::proc
