#pragma once
// A live Python target for the sampler tests: runs tests/fixtures/runtime/python/target.py
// (or any script taking the snapshot path as its argument, e.g. the Ruby sampler's target.rb)
// under an interpreter, waits until its threads have settled and it has written what
// sys._current_frames() reports (its "snapshot"), and kills it on destruction.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace gp::test {

struct SnapshotFrame {
  uint32_t first_line = 0;
  std::string name;
  std::string file;
};

struct SnapshotThread {
  int32_t tid = 0;
  std::string name;
  std::vector<SnapshotFrame> frames;  // root first
};

inline std::vector<SnapshotThread> parse_snapshot(const std::string& path) {
  std::vector<SnapshotThread> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "thread") {
      out.emplace_back();
      ls >> out.back().tid >> out.back().name;
    } else if (tag == "frame" && !out.empty()) {
      SnapshotFrame f;
      ls >> f.first_line >> f.name;
      std::getline(ls >> std::ws, f.file);
      out.back().frames.push_back(f);
    }
  }
  return out;
}

class PythonTarget {
 public:
  explicit PythonTarget(std::string interpreter = "/usr/bin/python3",
                        std::string script = std::string(GP_TEST_DATA_DIR) +
                                             "/fixtures/runtime/python/target.py")
      : dir_(make_dir()) {
    snapshot_path_ = dir_ + "/snapshot.txt";
    pid_ = fork();
    if (pid_ == 0) {
      execl(interpreter.c_str(), interpreter.c_str(), script.c_str(), snapshot_path_.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~PythonTarget() {
    stop();
    std::filesystem::remove_all(dir_);
  }
  PythonTarget(const PythonTarget&) = delete;
  PythonTarget& operator=(const PythonTarget&) = delete;

  // Waits (up to 60 s: the machine may be busy) for the snapshot; false if the target died.
  bool wait_ready() {
    for (int i = 0; i < 6000; ++i) {
      if (std::filesystem::exists(snapshot_path_)) return true;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  pid_t pid() const { return pid_; }
  std::vector<SnapshotThread> snapshot() const { return parse_snapshot(snapshot_path_); }
  const std::string& snapshot_path() const { return snapshot_path_; }

 private:
  static std::string make_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gp-pytarget-XXXXXX").string();
    return mkdtemp(tmpl.data()) ? tmpl : std::string("/tmp");
  }
  std::string dir_;
  std::string snapshot_path_;
  pid_t pid_ = -1;
};

}  // namespace gp::test
