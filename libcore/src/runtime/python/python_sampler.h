#pragma once
// PythonSampler: gp's CPython sampler for one process — locate the interpreter, pick the
// layout of its version, and take whole-process stack snapshots, retrying torn ones.
// Used by the gp-python adapter (one sampler per target thread) and by the sampler bench.

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "runtime/python/frame_walker.h"
#include "runtime/python/interpreter_locator.h"
#include "runtime/python/python_layout.h"

namespace gp::runtime::python {

struct AttachFailure {
  enum class Kind { gone, not_python, unsupported, denied } kind;
  std::string reason;  // one line, no trailing period
};

using remote::SamplerStats;

class PythonSampler {
 public:
  static std::variant<std::unique_ptr<PythonSampler>, AttachFailure> attach(
      pid_t pid, const std::string& proc_root = "/proc");

  // One snapshot of every thread; retries a torn read up to `retries` times. `gone`/`denied`
  // are final; `torn` after all retries means this tick has no sample.
  WalkStatus sample(std::vector<ThreadSample>& out, int retries = 3);

  const InterpreterInfo& interpreter() const { return info_; }
  const SamplerStats& stats() const { return stats_; }
  uint64_t reads() const { return memory_.reads(); }
  // A code object seen in a frame by another walker (gp-record's BPF program), named.
  WalkStatus describe(uint64_t code, uint64_t offset, bool offset_known, PyFrameInfo& out) {
    return walker_.describe(code, offset, offset_known, out);
  }
  const PyLayout& layout() const { return walker_.layout(); }

  PythonSampler(pid_t pid, InterpreterInfo info, PyLayout layout);

 private:
  static std::variant<PyLayout, AttachFailure> published_layout(InterpreterInfo& info,
                                                                std::string_view head);
  static std::variant<PyLayout, AttachFailure> table_layout(const InterpreterInfo& info);
  void fill_missing_tids(std::vector<ThreadSample>& threads);
  void to_own_namespace_tids(std::vector<ThreadSample>& threads);

  RemoteMemory memory_;
  InterpreterInfo info_;
  FrameWalker walker_;
  SamplerStats stats_;
  int tid_offset_ = -1;   // where glibc's struct pthread keeps the tid (3.8-3.10); -1 unknown
  int tid_searches_ = 0;  // a search can fail on a thread being born; a few are allowed
  // The target's tids (its pid namespace's, as the interpreter records them) -> gp's.
  std::unordered_map<int32_t, int32_t> tids_;
};

}  // namespace gp::runtime::python
