#pragma once
// gp-profile's log: "[YYYY-MM-DD HH:MM:SS] gp-profile: <severity>: <message>" lines on stderr
// and, with --log-file, appended to a file (rotated once it passes --log-rotate-max-size,
// keeping --log-rotate-backup-count old files FILE.1, FILE.2 ..., as gProfiler does). On a
// terminal, a progress line is redrawn in place between log lines. With a remote sink
// attached (gProfiler's remote logs), every record also goes there, whatever the verbosity,
// as gProfiler sends its DEBUG records too. Thread-safe.

#include <cstdio>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>

#include "gp/upload/remote_logs.h"

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

  using Where = std::source_location;
  void error(std::string_view message, Where where = Where::current());
  void warning(std::string_view message, Where where = Where::current());
  // Shown at verbosity >= level (0: always, the session summaries). Sent to the remote sink
  // as INFO (levels 0 and 1) or DEBUG (2 and more).
  void info(int level, std::string_view message, Where where = Where::current());
  // An info line for stderr and the file only (gProfiler's no_server_log records).
  void info_local(int level, std::string_view message);
  // A warning for stderr and the file only (the remote sink's own failures).
  void local_warning(std::string_view message);

  // Records go to `remote` too from now on (nullptr: no more). Not owned.
  void attach_remote(gp::upload::RemoteLogs* remote);
  // gProfiler's cycle_id in each record's extra: the session's id, or null between sessions.
  void set_cycle_id(std::optional<std::string> id);
  // Redraws the progress line (terminal only, never in the file).
  void progress(std::string_view message);
  void clear_progress();
  // Writes `text` as it is on stderr when it is a terminal and not quiet (a table for the
  // person at the terminal: never in a pipe, nor in the file).
  void terminal_text(std::string_view text);

 private:
  void emit(std::string_view severity, std::string_view message, bool to_stderr, bool to_file);
  void rotate_if_needed(size_t next_record);
  void send(gp::upload::LogSeverity severity, std::string_view message, const Where& where);

  std::recursive_mutex mutex_;
  gp::upload::RemoteLogs* remote_ = nullptr;
  std::optional<std::string> cycle_id_;

  int verbosity_ = 0;
  bool quiet_ = false;
  bool tty_ = false;
  std::string path_;
  long max_bytes_ = 5L * 1024 * 1024;
  long backups_ = 1;
  std::FILE* file_ = nullptr;
};

}  // namespace gp::profile_tool
