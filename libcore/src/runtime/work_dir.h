#pragma once
// The driver's private work directory: mkdtemp (mode 0700, a fresh random name, so no other
// user can plant files or links in it), removed with everything in it when the object dies.
// Removal never follows symbolic links (nftw FTW_PHYS).
//
// A run killed with SIGKILL cannot remove its directory. Each directory therefore holds an
// `owner` file naming its creator (pid and start time in clock ticks after boot), and create()
// first removes the gp-runtime-* directories in the same parent that it can prove are left
// over: a directory (not a link) of this user, mode 0700, whose owner file names a process that
// no longer exists or a pid now reused by a process started at another time. Anything else is
// left alone.

#include <string>

#include "gp/util/result.h"

namespace gp::runtime {

class WorkDir {
 public:
  // Under `parent`, or $TMPDIR, or /tmp.
  static Result<WorkDir> create(const std::string& parent);
  // Removes the left-over directories of dead runs under `parent` (see above); how many.
  static size_t remove_stale(const std::string& parent, const std::string& proc_root = "/proc");
  WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir();
  const std::string& path() const { return path_; }
  // A 0700 subdirectory for one target ("<path>/<pid>"); "" when it cannot be made.
  std::string subdir(const std::string& name) const;

 private:
  explicit WorkDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace gp::runtime
