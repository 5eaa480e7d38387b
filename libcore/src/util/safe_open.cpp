// open_for_writing: the protected_symlinks / protected_regular rules (gp/util/safe_open.h).
#include "gp/util/safe_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gp::util {
namespace {

// "create" for a new output (as every tool words it), "open" for a file appended to.
std::string cannot(const std::string& path, int err, int flags) {
  return std::string((flags & O_APPEND) != 0 ? "cannot open '" : "cannot create '") + path +
         "': " + std::strerror(err);
}

// True when the directory is sticky and every user can write it.
bool shared_sticky(const struct stat& dir) {
  return (dir.st_mode & S_ISVTX) != 0 && (dir.st_mode & S_IWOTH) != 0;
}

// The kernel's rule: the caller's own, or the directory owner's.
bool trusted_owner(uid_t owner, const struct stat& dir) {
  return owner == ::geteuid() || owner == dir.st_uid;
}

}  // namespace

Result<int> open_for_writing(const std::string& path, int flags, mode_t mode) {
  const size_t slash = path.rfind('/');
  const std::string dir_path =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) return make_error(cannot(path, errno, flags));
    return fd;
  }
  int dir = ::open(dir_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return make_error(cannot(path, errno, flags));
  struct stat dst {};
  if (::fstat(dir, &dst) != 0) {
    int e = errno;
    ::close(dir);
    return make_error(cannot(path, e, flags));
  }
  const bool shared = shared_sticky(dst);
  struct stat st {};
  const bool exists = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  std::string refused;
  bool follow = false;
  if (exists && shared && !trusted_owner(st.st_uid, dst)) {
    refused = std::string(S_ISLNK(st.st_mode) ? "a symbolic link" : "a file") + " owned by uid " +
              std::to_string(st.st_uid) + " in a sticky world-writable directory";
    if (!S_ISLNK(st.st_mode) && (flags & O_CREAT) == 0)
      refused.clear();  // protected_regular: O_CREAT only
  }
  if (exists && S_ISLNK(st.st_mode)) follow = true;
  if (!refused.empty()) {
    ::close(dir);
    return make_error("refused '" + path + "': " + refused);
  }
  // Without a link to follow, O_NOFOLLOW closes the race of a link planted after the check.
  int fd =
      ::openat(dir, name.c_str(), flags | O_CLOEXEC | (follow || !shared ? 0 : O_NOFOLLOW), mode);
  int e = errno;
  ::close(dir);
  if (fd < 0 && e == ELOOP)
    return make_error("refused '" + path +
                      "': a symbolic link appeared in a sticky world-writable directory");
  if (fd < 0) return make_error(cannot(path, e, flags));
  return fd;
}

}  // namespace gp::util
