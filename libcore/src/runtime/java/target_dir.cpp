// A private directory in the target's /tmp (see target_dir.h).
#include "target_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gp/runtime/discovery.h"
#include "gp/runtime/work_dir.h"

namespace gp::runtime::java {
namespace {

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  if (getrandom(buf.data(), buf.size(), 0) != static_cast<ssize_t>(buf.size())) {
    // getrandom on Linux ≥ 3.17 does not fail for small sizes; keep going with what we have.
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : buf) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

std::string errno_text() { return std::strerror(errno); }

constexpr size_t kRandomHex = 16;  // random_hex(8)

// "r<pid>.<start ticks>": the gp-runtime process that made a directory (its pid as gp sees it
// and its start time in clock ticks after boot, which tells a reused pid apart).
std::string owner_tag() {
  auto self = read_stat(getpid());
  return "r" + std::to_string(getpid()) + "." + std::to_string(self ? self->start_ticks : 0);
}

// The owner of "gp-<tag>-r<pid>.<ticks>-<16 hex>", when the name has that form.
bool parse_owner(const std::string& name, pid_t& pid, unsigned long long& ticks) {
  if (name.rfind("gp-", 0) != 0 || name.size() < 3 + kRandomHex + 6) return false;
  size_t last = name.rfind('-');
  if (last == std::string::npos || name.size() - last - 1 != kRandomHex) return false;
  if (name.find_first_not_of("0123456789abcdef", last + 1) != std::string::npos) return false;
  size_t prev = name.rfind('-', last - 1);
  if (prev == std::string::npos || prev < 3) return false;
  std::string owner = name.substr(prev + 1, last - prev - 1);
  char rest = 0;
  return std::sscanf(owner.c_str(), "r%d.%llu%c", &pid, &ticks, &rest) == 2 && pid > 0 && ticks > 0;
}

// Empties and removes the directory `name` of tmp_fd without following links (its entries
// were made by gp or by the JVM for gp; a JVM-made subdirectory is emptied one level down).
void remove_dir_at(int tmp_fd, const std::string& name) {
  int dir_fd = openat(tmp_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;
  int list_fd = dup(dir_fd);
  std::vector<std::string> names;
  if (DIR* d = list_fd >= 0 ? fdopendir(list_fd) : nullptr) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  } else if (list_fd >= 0) {
    close(list_fd);
  }
  for (const auto& n : names) {
    if (unlinkat(dir_fd, n.c_str(), 0) != 0 && errno == EISDIR) remove_dir_at(dir_fd, n);
  }
  close(dir_fd);
  unlinkat(tmp_fd, name.c_str(), AT_REMOVEDIR);
}

}  // namespace

size_t TargetDir::remove_stale(int tmp_fd, const std::string& proc_root) {
  int list_fd = openat(tmp_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = list_fd >= 0 ? fdopendir(list_fd) : nullptr;
  if (d == nullptr) {
    if (list_fd >= 0) close(list_fd);
    return 0;
  }
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    pid_t pid = 0;
    unsigned long long ticks = 0;
    std::string name = e->d_name;
    if (!parse_owner(name, pid, ticks)) continue;
    auto alive = read_stat(pid, proc_root);
    if (alive && alive->start_ticks == ticks) continue;  // its run is still going
    stale.push_back(name);
  }
  closedir(d);
  for (const auto& name : stale) remove_dir_at(tmp_fd, name);
  return stale.size();
}

Result<TargetDir> TargetDir::create(const std::string& root, const std::string& tag,
                                    const Credentials& owner) {
  int root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return make_error("cannot open '" + root + "': " + errno_text());
  int tmp_fd = openat(root_fd, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  close(root_fd);
  if (tmp_fd < 0) return make_error("cannot open the JVM's /tmp: " + errno_text());
  // Directories of gp-runtime runs that were killed before they could remove them.
  remove_stale(tmp_fd);
  std::string name = "gp-" + tag + "-" + owner_tag() + "-" + random_hex(8);
  if (mkdirat(tmp_fd, name.c_str(), 0700) != 0) {
    std::string why = errno_text();
    close(tmp_fd);
    return make_error("cannot create '/tmp/" + name + "' for the JVM: " + why);
  }
  int dir_fd = openat(tmp_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0 || fchown(dir_fd, owner.uid, owner.gid) != 0) {
    std::string why = errno_text();
    if (dir_fd >= 0) close(dir_fd);
    unlinkat(tmp_fd, name.c_str(), AT_REMOVEDIR);
    close(tmp_fd);
    return make_error("cannot hand '/tmp/" + name + "' to the JVM's user: " + why);
  }
  return TargetDir(tmp_fd, dir_fd, name, owner);
}

TargetDir::TargetDir(int tmp_fd, int dir_fd, std::string dir_name, Credentials owner)
    : tmp_fd_(tmp_fd), dir_fd_(dir_fd), dir_name_(std::move(dir_name)), owner_(owner) {
  // Through a descriptor of its own: the /tmp stays the JVM's even if this object is gone.
  live_fd_ = dup(tmp_fd_);
  if (live_fd_ >= 0) {
    live_token_ =
        WorkDir::register_live([keep = live_fd_, name = dir_name_] { remove_dir_at(keep, name); });
  }
}

TargetDir::TargetDir(TargetDir&& other) noexcept
    : tmp_fd_(other.tmp_fd_),
      dir_fd_(other.dir_fd_),
      dir_name_(std::move(other.dir_name_)),
      owner_(other.owner_),
      live_token_(other.live_token_),
      live_fd_(other.live_fd_) {
  other.tmp_fd_ = -1;
  other.dir_fd_ = -1;
  other.live_token_ = 0;
  other.live_fd_ = -1;
}

TargetDir::~TargetDir() {
  if (live_token_ != 0) WorkDir::unregister_live(live_token_);
  if (live_fd_ >= 0) close(live_fd_);
  if (dir_fd_ < 0) return;
  // Everything in it was made by gp or by the JVM for gp: remove all plain entries.
  int list_fd = openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (DIR* d = list_fd >= 0 ? fdopendir(list_fd) : nullptr) {
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
    for (const auto& n : names) unlinkat(dir_fd_, n.c_str(), 0);
  } else if (list_fd >= 0) {
    close(list_fd);
  }
  close(dir_fd_);
  unlinkat(tmp_fd_, dir_name_.c_str(), AT_REMOVEDIR);
  close(tmp_fd_);
}

Status TargetDir::write_file(const std::string& name, const std::string& content) {
  int fd =
      openat(dir_fd_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return make_error("cannot create '" + target_path(name) + "': " + errno_text());
  bool ok = fchown(fd, owner_.uid, owner_.gid) == 0;
  size_t done = 0;
  while (ok && done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n <= 0) ok = false;
    else done += static_cast<size_t>(n);
  }
  std::string why = errno_text();
  close(fd);
  if (!ok) return make_error("cannot write '" + target_path(name) + "': " + why);
  return ok_status();
}

Status TargetDir::copy_out(const std::string& name, const std::string& dest, uint64_t max_bytes) {
  int in = openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (in < 0) {
    if (errno == ENOENT) return make_error("missing '" + target_path(name) + "'");
    return make_error("cannot open '" + target_path(name) + "': " + errno_text());
  }
  struct stat st {};
  if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > max_bytes) {
    close(in);
    return make_error("'" + target_path(name) + "' is not a regular file of at most " +
                      std::to_string(max_bytes) + " bytes");
  }
  int out = open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) {
    close(in);
    return make_error("cannot create '" + dest + "': " + errno_text());
  }
  char buf[65536];
  uint64_t total = 0;
  bool ok = true;
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0) ok = false;
    if (n <= 0) break;
    total += static_cast<uint64_t>(n);
    if (total > max_bytes || write(out, buf, static_cast<size_t>(n)) != n) {
      ok = false;
      break;
    }
  }
  close(in);
  close(out);
  if (!ok) return make_error("cannot copy '" + target_path(name) + "' to '" + dest + "'");
  return ok_status();
}

void TargetDir::remove(const std::string& name) { unlinkat(dir_fd_, name.c_str(), 0); }

}  // namespace gp::runtime::java
