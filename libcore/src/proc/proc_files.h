#pragma once
// Small-file reading helpers for procfs/sysfs (private to libcore/src/proc).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

namespace gp::proc {

// Reads at most max_bytes of path (procfs files report size 0, so read until EOF). On failure
// the Error message is strerror(errno) and *err (when given) receives errno.
Result<std::string> read_file(const std::string& path, size_t max_bytes = 1 << 20,
                              int* err = nullptr);

// Same, relative to a directory fd (openat), never following a symlink in the last component.
Result<std::string> read_file_at(int dir_fd, const char* name, size_t max_bytes,
                                 int* err = nullptr);

// Splits on sep; empty pieces are kept except a trailing one.
std::vector<std::string> split(std::string_view text, char sep);

// text without trailing '\n' (and '\r').
std::string_view chomp(std::string_view text);

// Parses an unsigned number in base 10 or 16; false on junk, overflow or empty input.
bool parse_u64(std::string_view text, uint64_t& out, int base = 10);

// "ESRCH/ENOENT on /proc/PID/*" means the process is gone.
bool is_gone_errno(int err);

}  // namespace gp::proc

namespace gp::proc {

// The procfs directory to read a process's address space from (maps, exe, cmdline, mem):
// <dir> itself, unless the thread-group leader is a zombie (it called pthread_exit) while
// other threads run; then <dir>/task/<tid> of a live thread, whose files show the same memory.
std::string memory_dir(const std::string& dir, int32_t pid);

}  // namespace gp::proc
