// A private directory in the target's /tmp (see target_dir.h).
#include "target_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

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

}  // namespace

Result<TargetDir> TargetDir::create(const std::string& root, const std::string& tag,
                                    const Credentials& owner) {
  int root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return make_error("cannot open '" + root + "': " + errno_text());
  int tmp_fd = openat(root_fd, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  close(root_fd);
  if (tmp_fd < 0) return make_error("cannot open the JVM's /tmp: " + errno_text());
  std::string name = "gp-" + tag + "-" + random_hex(8);
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

TargetDir::TargetDir(TargetDir&& other) noexcept
    : tmp_fd_(other.tmp_fd_),
      dir_fd_(other.dir_fd_),
      dir_name_(std::move(other.dir_name_)),
      owner_(other.owner_) {
  other.tmp_fd_ = -1;
  other.dir_fd_ = -1;
}

TargetDir::~TargetDir() {
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
