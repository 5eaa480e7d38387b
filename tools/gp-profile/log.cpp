#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>

#include "gp/cli/progress.h"
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
    return make_error("cannot open log file '" + path +
                      "': " + (why.empty() ? ::strerror(errno) : why));
  path_ = path;
  max_bytes_ = max_bytes;
  backups_ = backups;
  return ok_status();
}

void Log::error(std::string_view message, Where where) {
  emit("error", message, true, true);
  send(gp::upload::LogSeverity::error, message, where);
}
void Log::warning(std::string_view message, Where where) {
  emit("warning", message, !quiet_, true);
  send(gp::upload::LogSeverity::warning, message, where);
}
void Log::info(int level, std::string_view message, Where where) {
  emit("info", message, !quiet_ && verbosity_ >= level, verbosity_ >= level || level == 0);
  send(level >= 2 ? gp::upload::LogSeverity::debug : gp::upload::LogSeverity::info, message, where);
}
void Log::info_local(int level, std::string_view message) {
  emit("info", message, !quiet_ && verbosity_ >= level, verbosity_ >= level || level == 0);
}
void Log::local_warning(std::string_view message) { emit("warning", message, !quiet_, true); }

void Log::attach_remote(gp::upload::RemoteLogs* remote) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  remote_ = remote;
}

void Log::set_cycle_id(std::optional<std::string> id) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  cycle_id_ = std::move(id);
}

namespace {

// "tools/gp-profile/session.cpp" from the compiler's path of the source file.
std::string source_path(const char* file) {
  std::string_view f = file;
  for (std::string_view top : {"/tools/", "/libcore/"}) {
    size_t at = f.rfind(top);
    if (at != std::string_view::npos) return std::string(f.substr(at + 1));
  }
  return std::string(f);
}

// "run_session" from "gp::profile_tool::SessionOutcome gp::profile_tool::run_session(...)".
std::string function_name(const char* signature) {
  std::string_view f = signature;
  f = f.substr(0, f.find('('));
  size_t start = f.find_last_of(" :");
  return std::string(start == std::string_view::npos ? f : f.substr(start + 1));
}

}  // namespace

void Log::send(gp::upload::LogSeverity severity, std::string_view message, const Where& where) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (remote_ == nullptr) return;
  gp::upload::LogRecord r;
  r.severity = severity;
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  r.created = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  r.logger_name = "gprofiler.gp-profile";
  r.message = std::string(message);
  r.lineno = where.line();
  r.pathname = source_path(where.file_name());
  r.funcname = function_name(where.function_name());
  r.thread = static_cast<int64_t>(::gettid());
  r.extra.set("cycle_id", cycle_id_ ? json::Value::from_string(*cycle_id_) : json::Value::null());
  remote_->add(r);
}

void Log::emit(std::string_view severity, std::string_view message, bool to_stderr, bool to_file) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  std::string line = "[" + local_time_now() + "] " + gp::cli::program() + ": " +
                     std::string(severity) + ": " + gp::util::escape_for_terminal(message) + "\n";
  if (to_stderr) {
    clear_progress();
    write_all(STDERR_FILENO, line);
  }
  if (to_file && file_ != nullptr) {
    rotate_if_needed(line.size());
    if (file_ != nullptr) {
      std::fputs(line.c_str(), file_);
      std::fflush(file_);
    }
  }
}

void Log::progress(std::string_view message) {
  if (!quiet_) gp::cli::show_step(message);
}

void Log::terminal_text(std::string_view text) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (!tty_ || quiet_) return;
  clear_progress();
  write_all(STDERR_FILENO, std::string(text));
}

void Log::clear_progress() { gp::cli::clear_progress(); }

// Python's RotatingFileHandler: the file rolls over before a record that would take it to
// the bound (so a file stays below it unless one record alone is longer).
void Log::rotate_if_needed(size_t next_record) {
  long at = std::ftell(file_);
  if (at <= 0 || at + static_cast<long>(next_record) < max_bytes_) return;
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
