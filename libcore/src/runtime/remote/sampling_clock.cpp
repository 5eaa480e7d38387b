// Sampling clock and thread facts (see sampling_clock.h).
#include "runtime/remote/sampling_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string_view>

namespace gp::runtime::remote {

bool sleep_until(std::chrono::steady_clock::time_point when, std::stop_token stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  return !cv.wait_until(lock, stop, when, [] { return false; }) && !stop.stop_requested();
}

std::string thread_name(pid_t pid, int32_t tid) {
  if (tid <= 0) return {};
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

bool thread_on_cpu(pid_t pid, int32_t tid) {
  if (tid <= 0) return false;
  std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return false;
  // "tid (comm) S ...": the comm may hold spaces and parentheses; the state follows the last ')'.
  std::string_view s(buf, static_cast<size_t>(n));
  size_t paren = s.rfind(')');
  return paren != std::string_view::npos && paren + 2 < s.size() && s[paren + 2] == 'R';
}

}  // namespace gp::runtime::remote
