#pragma once
// The driver's private work directory: mkdtemp (mode 0700, a fresh random name, so no other
// user can plant files or links in it), removed with everything in it when the object dies.
// Removal never follows symbolic links (nftw FTW_PHYS).

#include <string>

#include "gp/util/result.h"

namespace gp::runtime {

class WorkDir {
 public:
  // Under `parent`, or $TMPDIR, or /tmp.
  static Result<WorkDir> create(const std::string& parent);
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
