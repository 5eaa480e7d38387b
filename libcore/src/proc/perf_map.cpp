// copy_perf_map: a root-safe copy of /tmp/perf-<nspid>.map (rules in gp/proc/perf_map.h).

#include "gp/proc/perf_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "gp/proc/unique_fd.h"
#include "proc/proc_files.h"

namespace gp::proc {
namespace {

// Real, effective, saved and filesystem uids: a perf map is created with the fsuid, and a
// setuid program may have any of them.
Result<std::set<uint32_t>> uids_in(const std::string& dir) {
  int err = 0;
  auto status = read_file(dir + "/status", 64 * 1024, &err);
  if (!status) {
    if (is_gone_errno(err)) return make_error("process exited");
    return make_error("cannot read process status: " + status.error().message);
  }
  std::set<uint32_t> uids;
  for (const std::string& line : split(*status, '\n')) {
    if (line.rfind("Uid:", 0) != 0) continue;
    for (const std::string& field : split(std::string_view(line).substr(4), '\t')) {
      uint64_t uid = 0;
      if (parse_u64(field, uid)) uids.insert(static_cast<uint32_t>(uid));
    }
  }
  if (uids.empty()) return make_error("process status has no Uid line");
  return uids;
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Opens <dir>/root/tmp without following a symlink below the process's root.
Result<UniqueFd> open_tmp_in(const std::string& dir) {
  // /proc/PID/root itself is a magic link into the process's mount namespace: following it is
  // the point. Nothing after it is followed.
  UniqueFd root(::open((dir + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    if (is_gone_errno(errno)) return make_error("process exited");
    return make_error(errno_text("cannot open process root"));
  }
  UniqueFd tmp(::openat(root.get(), "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!tmp.valid()) {
    if (errno == ELOOP || errno == ENOTDIR)
      return make_error("refused: /tmp is a symbolic link or not a directory");
    return make_error(errno_text("cannot open /tmp"));
  }
  return tmp;
}

// Opens <tmp>/<name>, not following a symlink.
Result<UniqueFd> open_map(int tmp_fd, const std::string& name) {
  // O_NONBLOCK: a FIFO planted under the name must not block the recorder.
  UniqueFd file(
      ::openat(tmp_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!file.valid()) {
    if (errno == ENOENT) return make_error("not found");
    if (errno == ELOOP) return make_error("refused: is a symbolic link");
    return make_error(errno_text("cannot open"));
  }
  return file;
}

// The mount an fd's file lives on: its mount id (Linux 5.8), else its device.
uint64_t mount_of(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID))
    return stx.stx_mnt_id;
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_dev) | (uint64_t{1} << 63) : 0;
}

// Type, owner, mount and link count checks on the opened file.
Status check_file(int tmp_fd, int fd, const std::set<uint32_t>& uids, uint64_t& size) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(errno_text("cannot stat"));
  if (!S_ISREG(st.st_mode)) return make_error("refused: not a regular file");
  // The process's own user only, root included only for a root process: a user who can make a
  // mount namespace can put any root-owned file under the map's name.
  if (uids.count(st.st_uid) == 0) {
    return make_error("refused: owned by uid " + std::to_string(st.st_uid) +
                      ", not by the process's user");
  }
  // A file bind-mounted over the map's name lives on another mount than /tmp itself.
  if (mount_of(fd) != mount_of(tmp_fd))
    return make_error("refused: mounted over /tmp from elsewhere");
  // A hard link to someone else's file (fs.protected_hardlinks=0) would pass the owner check
  // when that file is root's.
  if (st.st_nlink != 1)
    return make_error("refused: file has " + std::to_string(st.st_nlink) + " hard links");
  size = static_cast<uint64_t>(st.st_size);
  return ok_status();
}

Result<std::string> read_capped(int fd, size_t max_bytes, bool& truncated) {
  std::string text;
  char buf[65536];
  truncated = false;
  while (true) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return make_error(errno_text("cannot read"));
    if (got == 0) break;
    text.append(buf, static_cast<size_t>(got));
    if (text.size() > max_bytes) {
      truncated = true;
      text.resize(max_bytes);
      break;
    }
  }
  // The cap, or a writer in the middle of a line, may split the last line: keep whole lines only
  // (a tail read starts after them next time).
  text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  return text;
}

bool parse_hex(std::string_view s, uint64_t& out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return parse_u64(s, out, 16);
}

}  // namespace

size_t parse_perf_map(std::string_view text, model::JitMap& map) {
  size_t bad = 0;
  for (const std::string& raw : split(text, '\n')) {
    const std::string_view line = chomp(raw);
    if (line.empty()) continue;
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    model::JitEntry e;
    if (sp2 == std::string_view::npos || sp2 + 1 >= line.size() ||
        !parse_hex(line.substr(0, sp1), e.start) ||
        !parse_hex(line.substr(sp1 + 1, sp2 - sp1 - 1), e.size)) {
      ++bad;
      continue;
    }
    e.name = std::string(line.substr(sp2 + 1));
    map.entries.push_back(std::move(e));
  }
  return bad;
}

size_t mark_jit_mappings(std::vector<model::Mapping>& mappings, const model::JitMap& map) {
  std::vector<uint64_t> starts;
  starts.reserve(map.entries.size());
  for (const model::JitEntry& e : map.entries) starts.push_back(e.start);
  std::sort(starts.begin(), starts.end());
  size_t changed = 0;
  for (model::Mapping& m : mappings) {
    if (m.pid != map.pid || m.kind != model::MappingKind::anonymous) continue;
    auto it = std::lower_bound(starts.begin(), starts.end(), m.start);
    if (it != starts.end() && *it < m.end) {
      m.kind = model::MappingKind::jit_map;
      ++changed;
    }
  }
  return changed;
}

TmpDir::~TmpDir() {
  if (fd_ >= 0) ::close(fd_);
}

Result<TmpDirIdentity> tmp_dir_identity(int32_t pid, const std::string& proc_root) {
  // lstat: a /tmp that is a symlink is refused when opened, never followed here.
  struct stat st {};
  if (::lstat((proc_root + "/" + std::to_string(pid) + "/root/tmp").c_str(), &st) != 0) {
    if (is_gone_errno(errno) &&
        ::access((proc_root + "/" + std::to_string(pid)).c_str(), F_OK) != 0)
      return make_error("process exited");
    return make_error(errno_text("cannot identify the process's /tmp"));
  }
  return TmpDirIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

Result<std::shared_ptr<TmpDir>> open_tmp_dir(int32_t pid, const std::string& proc_root) {
  auto tmp = open_tmp_in(proc_root + "/" + std::to_string(pid));
  if (!tmp) return tmp.error();
  return std::make_shared<TmpDir>(tmp->release());
}

Result<std::set<uint32_t>> process_uids(int32_t pid, const std::string& proc_root) {
  return uids_in(proc_root + "/" + std::to_string(pid));
}

Result<model::JitMap> copy_perf_map_in(const TmpDir& tmp, const std::set<uint32_t>& uids,
                                       int32_t pid, int32_t ns_pid, size_t max_bytes,
                                       PerfMapStats* stats, uint64_t from_offset) {
  const std::string name = "perf-" + std::to_string(ns_pid) + ".map";
  auto fd = open_map(tmp.fd(), name);
  if (!fd) return fd.error();
  uint64_t size = 0;
  if (auto ok = check_file(tmp.fd(), fd->get(), uids, size); !ok) return ok.error();
  PerfMapStats local;
  PerfMapStats& st = stats ? *stats : local;
  st.rewritten = from_offset > size;  // shorter than what was read before: a new file
  if (st.rewritten) from_offset = 0;
  if (from_offset > 0 && ::lseek(fd->get(), static_cast<off_t>(from_offset), SEEK_SET) < 0)
    return make_error(errno_text("cannot seek"));
  auto text = read_capped(fd->get(), max_bytes, st.truncated);
  if (!text) return text.error();
  st.bytes_read = text->size();
  st.next_offset = from_offset + text->size();
  model::JitMap map;
  map.pid = pid;
  map.path = "/tmp/" + name;
  st.bad_lines = parse_perf_map(*text, map);
  return map;
}

Result<model::JitMap> copy_perf_map(int32_t pid, int32_t ns_pid, size_t max_bytes,
                                    PerfMapStats* stats, const std::string& proc_root,
                                    uint64_t from_offset) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  auto uids = uids_in(dir);
  if (!uids) return uids.error();
  auto tmp = open_tmp_in(dir);
  if (!tmp) return tmp.error();
  return copy_perf_map_in(TmpDir(tmp->release()), *uids, pid, ns_pid, max_bytes, stats,
                          from_offset);
}

}  // namespace gp::proc
