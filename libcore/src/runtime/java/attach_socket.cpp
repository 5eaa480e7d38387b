// A stale attach socket of a reused pid (see attach_socket.h).
#include "attach_socket.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "gp/proc/process.h"
#include "gp/proc/unique_fd.h"

namespace gp::runtime::java {
namespace {

// How much older than the JVM's start a file must be: start times are whole clock ticks, file
// times come from the kernel's coarse clock, and the two clocks are converted once.
constexpr int64_t kMarginNs = 1'000'000'000;

int64_t wall_ns(const timespec& t) { return t.tv_sec * 1'000'000'000LL + t.tv_nsec; }

bool older_than_start(const struct stat& st, const JvmProcess& jvm) {
  const int64_t start = proc::start_ticks_to_wall_ns(jvm.start_ticks);
  if (jvm.start_ticks == 0 || start == 0) return false;
  return std::max(wall_ns(st.st_ctim), wall_ns(st.st_mtim)) < start - kMarginNs;
}

}  // namespace

AttachSocket remove_stale_attach_socket(const JvmProcess& jvm, const std::string& proc_root) {
  proc::UniqueFd root(open((proc_root + "/" + std::to_string(jvm.pid) + "/root").c_str(),
                           O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return AttachSocket::absent;
  proc::UniqueFd tmp(openat(root.get(), "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (tmp.get() < 0) return AttachSocket::absent;
  std::string name = ".java_pid" + std::to_string(jvm.ns_pid);
  struct stat st {};
  if (fstatat(tmp.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return AttachSocket::absent;
  if (!S_ISSOCK(st.st_mode) || !older_than_start(st, jvm)) return AttachSocket::current;
  // The pid must still be the JVM whose start time was compared.
  if (!still_running(jvm, proc_root)) return AttachSocket::current;
  // Moved aside first: should the JVM create its socket between the check and the removal
  // (another tool attaching), that new file is what the rename catches, and it goes back. The
  // rename sets the ctime, so the identity of the inode is what is checked again.
  std::string aside = name + ".gp-stale-" + std::to_string(getpid());
  if (renameat2(tmp.get(), name.c_str(), tmp.get(), aside.c_str(), RENAME_NOREPLACE) != 0) {
    return AttachSocket::current;
  }
  struct stat moved {};
  if (fstatat(tmp.get(), aside.c_str(), &moved, AT_SYMLINK_NOFOLLOW) == 0 &&
      moved.st_dev == st.st_dev && moved.st_ino == st.st_ino && S_ISSOCK(moved.st_mode)) {
    unlinkat(tmp.get(), aside.c_str(), 0);
    return AttachSocket::removed;
  }
  renameat2(tmp.get(), aside.c_str(), tmp.get(), name.c_str(), RENAME_NOREPLACE);
  return AttachSocket::current;
}

}  // namespace gp::runtime::java
