#pragma once
// Reads another process's memory with process_vm_readv (no ptrace, the target keeps running),
// for gp's interpreter samplers (CPython, Ruby, PHP). Every read is a snapshot of a moving target:
// callers validate what they read and retry or drop a torn sample. Needs the right to
// ptrace-read the target (root, or same uid with ptrace_scope permitting, or CAP_SYS_PTRACE).

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "gp/proc/process.h"

namespace gp::runtime::remote {

enum class ReadStatus { ok, fault, gone, denied };

// One piece of a gathered read: size bytes at address into out.
struct ReadRequest {
  uint64_t address = 0;
  void* out = nullptr;
  size_t size = 0;
};

// Outcome of one stack snapshot: torn when a read faulted or what was read did not hold
// together (the target moved under the reader: retry or drop the tick); gone and denied are final.
enum class WalkStatus { ok, torn, gone, denied };

// The snapshot outcome of a failed read.
inline WalkStatus walk_status_of(ReadStatus s) {
  return s == ReadStatus::gone     ? WalkStatus::gone
         : s == ReadStatus::denied ? WalkStatus::denied
                                   : WalkStatus::torn;
}

// Counts of a sampler's snapshots.
struct SamplerStats {
  uint64_t snapshots = 0;  // successful
  uint64_t torn = 0;       // attempts dropped as torn (retried)
  uint64_t given_up = 0;   // ticks with no untorn snapshot after all retries
};

// One tick of a sampler: walk() until a snapshot holds together, at most retries + 1 times,
// counted in stats. A fault may also mean the process is exiting (its memory being torn
// down): gone when it no longer lives.
template <typename Walk>
WalkStatus sample_with_retries(Walk&& walk, int retries, pid_t pid, SamplerStats& stats) {
  for (int attempt = 0; attempt <= retries; ++attempt) {
    WalkStatus st = walk();
    if (st == WalkStatus::ok) {
      ++stats.snapshots;
      return st;
    }
    if (st != WalkStatus::torn) return st;
    ++stats.torn;
    if (!proc::process_alive(pid)) return WalkStatus::gone;
  }
  ++stats.given_up;
  return WalkStatus::torn;
}

class RemoteMemory {
 public:
  explicit RemoteMemory(pid_t pid) : pid_(pid) {}

  // Copies size bytes at address; ok only when all of them were read.
  ReadStatus read(uint64_t address, void* out, size_t size);
  // Several reads in as few system calls as the kernel allows (IOV_MAX pieces each); ok only
  // when every piece was read whole (a piece in unmapped memory makes the whole batch fail).
  ReadStatus read_many(std::span<const ReadRequest> requests);
  template <typename T>
  bool read_value(uint64_t address, T& out) {
    static_assert(std::is_trivially_copyable_v<T>);
    return read(address, &out, sizeof out) == ReadStatus::ok;
  }
  // Status of the last failed read (ok when none failed), and its errno text.
  ReadStatus last_failure() const { return last_failure_; }
  const std::string& last_error() const { return last_error_; }
  uint64_t reads() const { return reads_; }  // system calls made
  pid_t pid() const { return pid_; }

 private:
  ReadStatus failed(ssize_t got);  // records why a read returned `got` bytes (or -1)

  pid_t pid_;
  ReadStatus last_failure_ = ReadStatus::ok;
  std::string last_error_;
  uint64_t reads_ = 0;
};

}  // namespace gp::runtime::remote
