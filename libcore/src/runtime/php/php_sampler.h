#pragma once
// PhpSampler: gp's own PHP sampler for one process. It finds the Zend engine in the process (the
// php / php-fpm / php-cgi executable, or libphp when an embedding program maps it), reads the
// PHP version the file announces, and, for a version with a layout (php_layout.h), takes stack
// snapshots by following executor_globals.current_execute_data -> prev_execute_data with
// process_vm_readv while the target runs. PHP without ZTS runs one request per process, so a
// snapshot is one stack.
//
// Reads are bounded: depth, string lengths and the time one snapshot may take (WalkLimits). A
// snapshot that faults or does not hold together (a function of no known type,
// a chain that does not end, a string longer than it may be) is torn: retried, then dropped, and
// last_problem() says what was wrong. Function names are cached by zend_function address and
// revalidated from the function's header on every use.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "runtime/php/php_layout.h"
#include "runtime/remote/remote_memory.h"

namespace gp::runtime::php {

using remote::ReadStatus;
using remote::RemoteMemory;
using remote::SamplerStats;
using remote::WalkStatus;

// One PHP frame as phpspy names it: "[Class::]function FILE:LINE", "<main>" for a file's
// top-level code (the script, or an included file), "<internal>:-1" for internal functions and
// eval()'d code (as phpspy prints them).
struct PhpFrame {
  std::string name;   // "Class::method", "function", "{closure}", "<main>"
  std::string file;   // empty for internal functions
  int64_t line = -1;  // the executing line of a user frame; -1 for internal functions

  // phpspy's frame text: "name file:line" ("name <internal>:-1").
  std::string text() const;
};

struct InterpreterInfo {
  std::string path;  // the file holding the engine, as /proc/PID/maps names it
  PhpVersion version;
  uint64_t executor_globals = 0;  // run-time address
  uint64_t bias = 0;
};

struct AttachFailure {
  enum class Kind { gone, not_php, unsupported, denied } kind;
  std::string reason;  // one line, no trailing period
};

struct WalkLimits {
  size_t max_depth = 512;                     // deeper stacks are cut at the root end
  size_t max_string = 1024;                   // bytes of a name or path; longer ones are cut
  std::chrono::microseconds max_time{50000};  // one snapshot; longer is torn
};

class PhpSampler {
 public:
  static std::variant<std::unique_ptr<PhpSampler>, AttachFailure> attach(
      pid_t pid, const std::string& proc_root = "/proc", WalkLimits limits = {});

  // One snapshot, frames root first (empty when no PHP code runs); retries a torn one up to
  // `retries` times. gone/denied are final; torn after all retries means no sample this tick.
  WalkStatus sample(std::vector<PhpFrame>& out, int retries = 3);

  const InterpreterInfo& interpreter() const { return info_; }
  const SamplerStats& stats() const { return stats_; }
  uint64_t reads() const { return memory_.reads(); }
  // What made the last torn snapshot fail ("cannot read execute_data at 0x10: Bad address").
  const std::string& last_problem() const { return problem_; }

  PhpSampler(pid_t pid, InterpreterInfo info, PhpLayout layout, WalkLimits limits);

 private:
  struct FunctionInfo {
    std::string header;  // the type, name, scope and filename fields the strings came from
    bool user = false;
    std::string name;
    std::string file;
    uint32_t line_start = 0;
  };
  WalkStatus walk(std::vector<PhpFrame>& out);
  const FunctionInfo* function(uint64_t address, WalkStatus& status);
  WalkStatus read_string(uint64_t address, std::string& out, const char* what);
  WalkStatus fail(const std::string& what, uint64_t address);

  RemoteMemory memory_;
  InterpreterInfo info_;
  PhpLayout layout_;
  WalkLimits limits_;
  SamplerStats stats_;
  std::string problem_;
  std::string head_;  // the zend_function header being looked at
  std::unordered_map<uint64_t, FunctionInfo> functions_;
};

}  // namespace gp::runtime::php
