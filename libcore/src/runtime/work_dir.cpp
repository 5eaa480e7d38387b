// Private, self-removing work directory (work_dir.h).
#include "gp/runtime/work_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string_view>
#include <vector>

#include "gp/runtime/discovery.h"

namespace gp::runtime {
namespace {

int remove_entry(const char* path, const struct stat*, int, FTW*) {
  ::remove(path);
  return 0;
}

std::string base_dir(const std::string& parent) {
  if (!parent.empty()) return parent;
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

constexpr size_t kRandomChars = 6;  // mkdtemp's XXXXXX

// The directories of this process not yet removed (for remove_live).
std::mutex g_live_mu;
std::vector<std::string>& live_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}
std::vector<std::pair<uint64_t, std::function<void()>>>& live_others() {
  static std::vector<std::pair<uint64_t, std::function<void()>>> others;
  return others;
}
uint64_t g_next_token = 1;
void forget_live(const std::string& path) {
  std::lock_guard lock(g_live_mu);
  auto& dirs = live_dirs();
  dirs.erase(std::remove(dirs.begin(), dirs.end(), path), dirs.end());
}

// "PID START_TICKS" of the directory's owner file, read without following links.
bool read_owner(int dir_fd, pid_t& pid, unsigned long long& ticks) {
  int fd = ::openat(dir_fd, "owner", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  char text[64] = {};
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  return n > 0 && std::sscanf(text, "%d %llu", &pid, &ticks) == 2 && pid > 0;
}

}  // namespace

WorkDir::WorkDir(std::string path) : path_(std::move(path)) {
  std::lock_guard lock(g_live_mu);
  live_dirs().push_back(path_);
}

WorkDir::WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

void WorkDir::remove_live() {
  std::lock_guard lock(g_live_mu);
  for (auto& [token, remove] : live_others()) remove();
  live_others().clear();
  for (const auto& p : live_dirs()) ::nftw(p.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  live_dirs().clear();
}

uint64_t WorkDir::register_live(std::function<void()> remove) {
  std::lock_guard lock(g_live_mu);
  uint64_t token = g_next_token++;
  live_others().emplace_back(token, std::move(remove));
  return token;
}

void WorkDir::unregister_live(uint64_t token) {
  std::lock_guard lock(g_live_mu);
  auto& v = live_others();
  v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& e) { return e.first == token; }),
          v.end());
}

size_t WorkDir::remove_stale(const std::string& parent, const std::string& prefix,
                             const std::string& proc_root) {
  std::string base = base_dir(parent);
  DIR* dir = ::opendir(base.c_str());
  if (dir == nullptr) return 0;
  size_t removed = 0;
  while (const dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name.size() != prefix.size() + kRandomChars || name.substr(0, prefix.size()) != prefix)
      continue;
    int fd = ::openat(::dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    pid_t pid = 0;
    unsigned long long ticks = 0;
    bool ours = ::fstat(fd, &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 0777) == 0700 &&
                read_owner(fd, pid, ticks);
    ::close(fd);
    if (!ours) continue;
    auto alive = read_stat(pid, proc_root);
    if (alive && alive->start_ticks == ticks) continue;  // its run is still going
    std::string path = base + "/" + std::string(name);
    ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    ++removed;
  }
  ::closedir(dir);
  return removed;
}

Result<WorkDir> WorkDir::create(const std::string& parent, const std::string& prefix) {
  std::string base = base_dir(parent);
  remove_stale(base, prefix);
  std::string pattern = base + "/" + prefix + std::string(kRandomChars, 'X');
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return make_error("cannot create a work directory in '" + base + "': " + std::strerror(errno));
  }
  WorkDir dir{std::string(buf.data())};
  // Who made it, so a later run can prove it left over once this process is gone.
  if (auto self = read_stat(::getpid())) {
    std::ofstream(dir.path_ + "/owner") << ::getpid() << ' ' << self->start_ticks << '\n';
  }
  return dir;
}

WorkDir::~WorkDir() {
  if (path_.empty()) return;
  ::nftw(path_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  forget_live(path_);
}

std::string WorkDir::subdir(const std::string& name) const {
  std::string dir = path_ + "/" + name;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return {};
  return dir;
}

}  // namespace gp::runtime
