// Symlink resolution confined to a process's root (root_path.h).
#include "root_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <vector>

namespace gp::runtime::appid_detail {
namespace {

std::deque<std::string> split(const std::string& path) {
  std::deque<std::string> parts;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    if (end > pos) parts.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

std::string resolve_in_root(const std::string& path, const std::string& root) {
  std::deque<std::string> todo = split(path);
  std::vector<std::string> done;
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();  // ".." at the root stays at the root
      continue;
    }
    done.push_back(part);
    std::string host = root + join(done);
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0 || !S_ISLNK(st.st_mode) || ++links > 40) continue;
    char buf[4096];
    ssize_t n = ::readlink(host.c_str(), buf, sizeof buf);
    if (n <= 0) continue;
    std::string target(buf, static_cast<size_t>(n));
    done.pop_back();
    if (target.front() == '/') done.clear();
    std::deque<std::string> more = split(target);
    todo.insert(todo.begin(), more.begin(), more.end());
  }
  return join(done);
}

std::string host_path(const std::string& path, const std::string& root) {
  return root + resolve_in_root(path, root);
}

}  // namespace gp::runtime::appid_detail
