#pragma once
// A private directory in the target JVM's /tmp, for files the JVM itself must read or write
// (a JFR settings file, the recording, async-profiler's output): gp's own work_dir is 0700 root
// and may not even exist in the JVM's mount namespace.
//
// Safety as root in a directory others can write (/tmp): everything goes through file
// descriptors opened with O_NOFOLLOW from /proc/PID/root; the directory gets a random name,
// is created root-owned (so nobody can swap it in the sticky /tmp) and only then handed to the
// JVM's user. Later reads never follow a symlink the JVM's user may have planted.

#include <string>

#include "gp/util/result.h"
#include "tool_runner.h"

namespace gp::runtime::java {

class TargetDir {
 public:
  // Creates <root>/tmp/gp-<tag>-r<PID>.<TICKS>-<random> (root: "/proc/PID/root") owned by
  // `owner`, mode 0700; PID and TICKS (start time in clock ticks after boot) name this
  // gp-runtime process. First removes the directories of that /tmp whose named process is gone
  // or is another one now (a run killed with SIGKILL cannot remove its own).
  static Result<TargetDir> create(const std::string& root, const std::string& tag,
                                  const Credentials& owner);
  // Removes the left-over directories of dead gp-runtime runs in the /tmp open as tmp_fd;
  // how many.
  static size_t remove_stale(int tmp_fd, const std::string& proc_root = "/proc");
  TargetDir(TargetDir&& other) noexcept;
  TargetDir& operator=(TargetDir&&) = delete;
  TargetDir(const TargetDir&) = delete;
  ~TargetDir();  // removes the files this object knows of, then the directory

  // The path of `name` as the JVM sees it ("/tmp/gp-.../name").
  std::string target_path(const std::string& name) const {
    return "/tmp/" + dir_name_ + "/" + name;
  }

  // Writes a new file readable by the JVM's user.
  Status write_file(const std::string& name, const std::string& content);
  // Copies the regular file `name` (written by the JVM) to `dest` (a new file). Error when it
  // is missing (message starts with "missing"), not a regular file, or larger than max_bytes.
  Status copy_out(const std::string& name, const std::string& dest, uint64_t max_bytes);
  // Forgets and deletes `name` (also a file the JVM created).
  void remove(const std::string& name);

 private:
  TargetDir(int tmp_fd, int dir_fd, std::string dir_name, Credentials owner);

  int tmp_fd_ = -1;
  int dir_fd_ = -1;
  std::string dir_name_;
  Credentials owner_;
  uint64_t live_token_ = 0;  // WorkDir::register_live: removed if gp-runtime dies by a signal
  int live_fd_ = -1;         // the /tmp descriptor that removal uses
};

}  // namespace gp::runtime::java
