#pragma once
// gp-profile's log: "[YYYY-MM-DD HH:MM:SS] gp-profile: <severity>: <message>" lines on stderr
// and, with --log-file, appended to a file (rotated once it passes --log-rotate-max-size,
// keeping --log-rotate-backup-count old files FILE.1, FILE.2 ..., as gProfiler does). On a
// terminal, a progress line is redrawn in place between log lines.

#include <cstdio>
#include <string>
#include <string_view>

#include "gp/util/result.h"

namespace gp::profile_tool {

class Log {
 public:
  Log() = default;
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  ~Log();

  // verbosity: -v count; quiet: only errors on stderr (the file still gets info lines).
  void configure(int verbosity, bool quiet);
  // Creates the file's directory when missing, as gProfiler does.
  Status open_file(const std::string& path, long max_bytes = 5L * 1024 * 1024, long backups = 1);

  void error(std::string_view message);
  void warning(std::string_view message);
  // Shown at verbosity >= level (0: always, the session summaries).
  void info(int level, std::string_view message);
  // Redraws the progress line (terminal only, never in the file).
  void progress(std::string_view message);
  void clear_progress();

 private:
  void emit(std::string_view severity, std::string_view message, bool to_stderr, bool to_file);
  void rotate_if_needed();

  int verbosity_ = 0;
  bool quiet_ = false;
  bool tty_ = false;
  bool progress_shown_ = false;
  std::string path_;
  long max_bytes_ = 5L * 1024 * 1024;
  long backups_ = 1;
  std::FILE* file_ = nullptr;
};

}  // namespace gp::profile_tool
