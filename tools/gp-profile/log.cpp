#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>

#include "gp/cli/tool.h"
#include "gp/util/escape.h"
#include "gp/util/safe_open.h"

namespace gp::profile_tool {
namespace {

std::string local_time_now() {
  time_t now = ::time(nullptr);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  char buf[32];
  ::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Log::~Log() {
  clear_progress();
  if (file_ != nullptr) std::fclose(file_);
}

void Log::configure(int verbosity, bool quiet) {
  verbosity_ = verbosity;
  quiet_ = quiet;
  tty_ = gp::cli::is_terminal(STDERR_FILENO);
}

namespace {

// Appends through gp::util::open_for_writing: a link planted in /tmp under the log's name
// would otherwise make root append to the file it names.
FILE* open_append(const std::string& path, std::string* why) {
  auto fd = gp::util::open_for_writing(path, O_WRONLY | O_CREAT | O_APPEND);
  if (!fd) {
    if (why) *why = fd.error().message;
    return nullptr;
  }
  FILE* f = ::fdopen(*fd, "a");
  if (f == nullptr) ::close(*fd);
  return f;
}

}  // namespace

Status Log::open_file(const std::string& path, long max_bytes, long backups) {
  std::error_code ec;
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  std::string why;
  file_ = open_append(path, &why);
  if (file_ == nullptr)
    return make_error("cannot open log file '" + path + "': " + (why.empty() ? ::strerror(errno) : why));
  path_ = path;
  max_bytes_ = max_bytes;
  backups_ = backups;
  return ok_status();
}

void Log::error(std::string_view message) { emit("error", message, true, true); }
void Log::warning(std::string_view message) { emit("warning", message, !quiet_, true); }
void Log::info(int level, std::string_view message) {
  emit("info", message, !quiet_ && verbosity_ >= level, verbosity_ >= level || level == 0);
}

void Log::emit(std::string_view severity, std::string_view message, bool to_stderr, bool to_file) {
  std::string line = "[" + local_time_now() + "] " + gp::cli::program() + ": " +
                     std::string(severity) + ": " + gp::util::escape_for_terminal(message) + "\n";
  if (to_stderr) {
    clear_progress();
    write_all(STDERR_FILENO, line);
  }
  if (to_file && file_ != nullptr) {
    rotate_if_needed();
    if (file_ != nullptr) {
      std::fputs(line.c_str(), file_);
      std::fflush(file_);
    }
  }
}

void Log::progress(std::string_view message) {
  if (!tty_ || quiet_) return;
  write_all(STDERR_FILENO, "\r\033[K" + gp::cli::program() + ": " + gp::util::escape_for_terminal(message));
  progress_shown_ = true;
}

void Log::clear_progress() {
  if (!progress_shown_) return;
  write_all(STDERR_FILENO, "\r\033[K");
  progress_shown_ = false;
}

void Log::rotate_if_needed() {
  if (std::ftell(file_) < max_bytes_) return;
  std::fclose(file_);
  for (long i = backups_ - 1; i >= 1; --i) {
    std::string from = path_ + "." + std::to_string(i), to = path_ + "." + std::to_string(i + 1);
    ::rename(from.c_str(), to.c_str());
  }
  std::string backup = path_ + ".1";
  ::rename(path_.c_str(), backup.c_str());
  file_ = open_append(path_, nullptr);
}

}  // namespace gp::profile_tool
