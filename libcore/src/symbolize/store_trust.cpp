// check_store_trusted (gp/symbolize/store_trust.h).
#include "gp/symbolize/store_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gp::symbolize {
namespace {

namespace fs = std::filesystem;

// A store made by --export-symbols holds a few files per binary; a walk this long is not one.
constexpr size_t kMaxEntries = 1u << 20;

Status check_entry(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return make_error("cannot stat '" + path + "': " + std::strerror(errno));
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return make_error("'" + path + "' is owned by uid " + std::to_string(st.st_uid));
  if (S_ISLNK(st.st_mode)) {
    // The link is ours; what it names must pass too (not walked: a store has no reason to link
    // into a tree, so a directory behind a link is refused).
    struct stat target {};
    if (::stat(path.c_str(), &target) != 0 || !S_ISREG(target.st_mode))
      return make_error("'" + path + "' is a symbolic link to something other than a file");
    st = target;
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
      return make_error("'" + path + "' links to a file owned by uid " + std::to_string(st.st_uid));
  }
  if ((st.st_mode & S_IWOTH) != 0) return make_error("'" + path + "' can be written by every user");
  if ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0 && st.st_gid != ::getegid())
    return make_error("'" + path + "' can be written by group " + std::to_string(st.st_gid));
  return ok_status();
}

}  // namespace

Status check_store_trusted(const std::string& dir) {
  if (auto st = check_entry(dir); !st) return st;
  std::error_code ec;
  size_t n = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (++n > kMaxEntries)
      return make_error("'" + dir + "' holds more than " + std::to_string(kMaxEntries) +
                        " entries");
    if (auto st = check_entry(it->path().string()); !st) return st;
  }
  if (ec) return make_error("cannot read '" + dir + "': " + ec.message());
  return ok_status();
}

}  // namespace gp::symbolize
