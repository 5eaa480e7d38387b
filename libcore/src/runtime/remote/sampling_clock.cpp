// Sampling clock and thread facts (see sampling_clock.h).
#include "runtime/remote/sampling_clock.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
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

std::unordered_map<int32_t, int32_t> namespace_tids(pid_t pid) {
  std::unordered_map<int32_t, int32_t> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream in(dir + "/" + e->d_name + "/status");
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("NSpid:")) continue;
      std::istringstream fields(line.substr(6));
      int32_t own = 0, inner = 0;
      fields >> own;
      inner = own;
      for (int32_t v = 0; fields >> v;) inner = v;
      if (own > 0 && inner > 0) out[inner] = own;
      break;
    }
  }
  closedir(d);
  return out;
}

}  // namespace gp::runtime::remote
