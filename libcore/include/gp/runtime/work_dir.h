#pragma once
// A tool's private work directory (gp-runtime's driver, gp-profile): mkdtemp (mode 0700, a
// fresh random name, so no other user can plant files or links in it), removed with everything
// in it when the object dies, or by remove_live() (a process about to die by a signal).
// Removal never follows symbolic links (nftw FTW_PHYS).
//
// A run killed with SIGKILL cannot remove its directory. Each directory therefore holds an
// `owner` file naming its creator (pid and start time in clock ticks after boot), and create()
// first removes the <prefix>XXXXXX directories in the same parent that it can prove are left
// over: a directory (not a link) of this user, mode 0700, whose owner file names a process that
// no longer exists or a pid now reused by a process started at another time. Anything else is
// left alone.

#include <cstdint>
#include <functional>
#include <string>

#include "gp/util/result.h"

namespace gp::runtime {

class WorkDir {
 public:
  static constexpr const char* kRuntimePrefix = "gp-runtime-";
  // Under `parent`, or $TMPDIR, or /tmp; named <prefix> and 6 random characters.
  static Result<WorkDir> create(const std::string& parent,
                                const std::string& prefix = kRuntimePrefix);
  // Removes the left-over <prefix>XXXXXX directories of dead runs under `parent` (see above);
  // how many.
  static size_t remove_stale(const std::string& parent, const std::string& prefix = kRuntimePrefix,
                             const std::string& proc_root = "/proc");
  // Removes every directory of this process that is still there (from a thread that is about
  // to re-raise a fatal signal: destructors will not run).
  static void remove_live();
  // Other private directories (a JVM's) that remove_live() removes too: `remove` runs at most
  // once, from remove_live(), unless unregistered first (the owner removed it itself).
  static uint64_t register_live(std::function<void()> remove);
  static void unregister_live(uint64_t token);
  WorkDir(WorkDir&& other) noexcept;
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir();
  const std::string& path() const { return path_; }
  // A 0700 subdirectory for one target ("<path>/<pid>"); "" when it cannot be made.
  std::string subdir(const std::string& name) const;

 private:
  explicit WorkDir(std::string path);
  std::string path_;
};

}  // namespace gp::runtime
