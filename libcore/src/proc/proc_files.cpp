#include "proc/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "gp/proc/unique_fd.h"

namespace gp::proc {
namespace {

Result<std::string> read_fd(int fd, size_t max_bytes, int* err) {
  std::string out;
  char buf[16384];
  while (out.size() < max_bytes) {
    const size_t want = std::min(sizeof buf, max_bytes - out.size());
    const ssize_t got = ::read(fd, buf, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      if (err) *err = errno;
      return make_error(std::strerror(errno));
    }
    if (got == 0) break;
    out.append(buf, static_cast<size_t>(got));
  }
  return out;
}

}  // namespace

Result<std::string> read_file(const std::string& path, size_t max_bytes, int* err) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    if (err) *err = errno;
    return make_error(std::strerror(errno));
  }
  return read_fd(fd.get(), max_bytes, err);
}

Result<std::string> read_file_at(int dir_fd, const char* name, size_t max_bytes, int* err) {
  UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW));
  if (!fd.valid()) {
    if (err) *err = errno;
    return make_error(std::strerror(errno));
  }
  return read_fd(fd.get(), max_bytes, err);
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(sep, pos);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::string_view chomp(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

bool parse_u64(std::string_view text, uint64_t& out, int base) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool is_gone_errno(int err) { return err == ENOENT || err == ESRCH; }

}  // namespace gp::proc

namespace gp::proc {
namespace {

char task_state(const std::string& stat_path) {
  auto text = read_file(stat_path, 4096);
  if (!text) return '?';
  const size_t close = text->rfind(')');
  return close != std::string::npos && close + 2 < text->size() ? (*text)[close + 2] : '?';
}

}  // namespace

std::string memory_dir(const std::string& dir, int32_t pid) {
  if (task_state(dir + "/stat") != 'Z') return dir;
  DIR* tasks = ::opendir((dir + "/task").c_str());
  if (!tasks) return dir;
  std::string found = dir;
  while (dirent* e = ::readdir(tasks)) {
    uint64_t tid = 0;
    if (!parse_u64(e->d_name, tid) || tid == static_cast<uint64_t>(pid)) continue;
    const std::string task = dir + "/task/" + e->d_name;
    if (task_state(task + "/stat") != 'Z') {
      found = task;
      break;
    }
  }
  ::closedir(tasks);
  return found;
}

}  // namespace gp::proc
