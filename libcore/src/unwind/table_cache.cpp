// The cache directory: opened once, checked, and every entry reached through its descriptor
// with O_NOFOLLOW, so a path swapped after the check changes nothing.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "gp/unwind/table_cache.h"

namespace gp::unwind {
namespace {

constexpr const char* kSuffix = ".gpuw";

std::string errno_text(int err) { return std::strerror(err); }

// mkdir -p: parents 0755 (like any directory under /var/cache), the cache itself 0700.
bool make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), at == dir.size() ? 0700 : 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

bool read_all(int fd, uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      if (put == 0) errno = ENOSPC;
      return false;
    }
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);  // the clock of mtimes
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t mtime_ns(const struct stat& st) {
  return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

TableCache::TableCache(const std::string& dir, uint64_t max_bytes, Warn warn)
    : dir_(dir), max_bytes_(max_bytes), warn_(std::move(warn)) {
  if (const std::string why = open_dir(); !why.empty()) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = -1;
    warn_("unwind table cache '" + dir_ + "' not used: " + why);
    return;
  }
  scan();
}

std::string TableCache::open_dir() {
  if (dir_.empty() || dir_[0] != '/') return "not an absolute path";
  if (!make_dirs(dir_)) return "cannot create it: " + errno_text(errno);
  dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd_ < 0) {
    const int err = errno;
    struct stat st;
    if (::lstat(dir_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return "it is a symlink";
    return errno_text(err);
  }
  struct stat st;
  if (::fstat(dir_fd_, &st) != 0) return errno_text(errno);
  if (st.st_uid != ::geteuid())
    return "owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by other users";
  if ((st.st_mode & 07777) != 0700) ::fchmod(dir_fd_, 0700);  // ours: no one else reads it
  return "";
}

TableCache::~TableCache() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::string TableCache::entry_name(const std::string& build_id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (unsigned char c : build_id) {
    name += kHex[c >> 4];
    name += kHex[c & 15];
  }
  return name + ".v" + std::to_string(kTableEntryVersion) + kSuffix;
}

void TableCache::refuse(const std::string& name, const std::string& why, bool remove) {
  ++stats_.refused;
  warn_("unwind table cache: refused '" + dir_ + "/" + name + "' (" + why + "); rebuilding it");
  if (remove && ::unlinkat(dir_fd_, name.c_str(), 0) == 0) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const Entry& e) { return e.name == name; });
    if (it != entries_.end()) {
      total_bytes_ -= it->bytes;
      entries_.erase(it);
    }
  }
}

std::optional<LoadedBinary> TableCache::load(const std::string& build_id, uint64_t file_size) {
  if (dir_fd_ < 0 || build_id.empty() || build_id.size() > 64) return std::nullopt;
  const std::string name = entry_name(build_id);
  const int fd =
      ::openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) {
      ++stats_.misses;
    } else {
      // ELOOP: a symlink. The cache never makes one; removing it unlinks the link only.
      refuse(name, errno == ELOOP ? "a symlink" : errno_text(errno), errno == ELOOP);
    }
    return std::nullopt;
  }
  struct stat st;
  std::string why;
  if (::fstat(fd, &st) != 0) why = errno_text(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != ::geteuid()) why = "owned by uid " + std::to_string(st.st_uid);
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) why = "writable by other users";
  else if (st.st_nlink != 1) why = "has other hard links";
  else if (static_cast<uint64_t>(st.st_size) > max_bytes_) why = "larger than the cache";
  std::vector<uint8_t> bytes;
  if (why.empty()) {
    bytes.resize(static_cast<size_t>(st.st_size));
    if (!read_all(fd, bytes.data(), bytes.size())) why = "unreadable";
  }
  Result<LoadedBinary> got = make_error(why);
  if (why.empty()) {
    got = decode_table_entry(bytes, build_id, file_size);
    if (!got) why = got.error().message;
  }
  if (!why.empty()) {
    ::close(fd);
    refuse(name, why, true);
    return std::nullopt;
  }
  ::futimens(fd, nullptr);  // most recently used
  ::close(fd);
  for (Entry& e : entries_)
    if (e.name == name) e.age_ns = now_ns();
  ++stats_.hits;
  return std::move(*got);
}

void TableCache::store(const std::string& build_id, uint64_t file_size,
                       const LoadedBinary& binary) {
  if (dir_fd_ < 0 || build_id.empty() || build_id.size() > 64) return;
  const std::vector<uint8_t> bytes = encode_table_entry(build_id, file_size, binary);
  if (bytes.size() > max_bytes_) return;
  const std::string name = entry_name(build_id);
  evict_for(bytes.size());
  const std::string tmp =
      "." + name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(++serial_);
  const auto failed = [&](const std::string& what) {
    ++stats_.write_failed;
    if (!write_warned_) {
      write_warned_ = true;
      warn_("unwind table cache '" + dir_ + "': cannot write entries (" + what +
            "); tables are built each time");
    }
  };
  const int fd =
      ::openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return failed(errno_text(errno));
  const bool ok = write_all(fd, bytes.data(), bytes.size());
  const int err = errno;
  if (::close(fd) != 0 || !ok) {
    ::unlinkat(dir_fd_, tmp.c_str(), 0);
    return failed(errno_text(ok ? errno : err));
  }
  if (::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) {
    const int rename_err = errno;
    ::unlinkat(dir_fd_, tmp.c_str(), 0);
    return failed(errno_text(rename_err));
  }
  ++stats_.written;
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.name == name; });
  if (it != entries_.end()) {
    total_bytes_ -= it->bytes;
    entries_.erase(it);
  }
  entries_.push_back(Entry{name, bytes.size(), now_ns()});
  total_bytes_ += bytes.size();
}

void TableCache::scan() {
  entries_.clear();
  total_bytes_ = 0;
  const int fd = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  const size_t suffix = std::strlen(kSuffix);
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    if (name[0] == '.') {
      // A temporary file a killed recorder left an hour ago or more (a younger one may be
      // another recorder's, being written now).
      constexpr int64_t kHour = int64_t{3600} * 1000000000;
      if (name.find(".tmp.") != std::string::npos &&
          ::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          now_ns() - mtime_ns(st) > kHour)
        ::unlinkat(dir_fd_, name.c_str(), 0);
      continue;
    }
    if (name.size() <= suffix || name.compare(name.size() - suffix, suffix, kSuffix) != 0) continue;
    if (::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    entries_.push_back(Entry{name, static_cast<uint64_t>(st.st_size), mtime_ns(st)});
    total_bytes_ += static_cast<uint64_t>(st.st_size);
  }
  ::closedir(d);
}

void TableCache::evict_for(uint64_t bytes) {
  if (total_bytes_ + bytes <= max_bytes_) return;
  // Least recently used first.
  std::stable_sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.age_ns < b.age_ns; });
  size_t dropped = 0;
  while (dropped < entries_.size() && total_bytes_ + bytes > max_bytes_) {
    const Entry& e = entries_[dropped++];
    ::unlinkat(dir_fd_, e.name.c_str(), 0);
    total_bytes_ -= e.bytes;
    ++stats_.evicted;
  }
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<ptrdiff_t>(dropped));
}

}  // namespace gp::unwind
