#pragma once
// DeferredStacks: samples whose user stack the BPF sampler copied instead of walking it (their
// process had no unwind tables loaded yet: its first samples), held until they can be unwound
// with the process's tables (gp/unwind/stack_walker.h: the BPF walker's rules) and then handed
// to the drain of the sample slot they were taken in, as whole stacks with their true end.
//
// A copy is unwound as soon as its process's tables are there: when it arrives, when a load of
// the process's tables finishes (tables_changed), and before the process's tables are dropped
// (process_gone). A walk that does not reach the outermost frame at an address without a table
// is tried again at each later load until its slot's drain: the mappings may have been read
// before the loader mapped every library. A copy still waiting when its slot is drained, or whose
// process goes without tables, is walked with frame pointers through the copy (no rules: what the
// BPF program would have done, and marked as it marks such a walk: truncated unless the chain ended
// at a zero frame pointer after one frame record at least), counted, never shown as more than it
// is. A copy taken because the walk met a mapping whose table was not loaded yet (its process had
// tables) that still does not reach the outermost frame then, at an address without a table, is
// truncated.
// Thread-safe: copies come from the recorder's thread, loads and drops from the table loader's.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"
#include "gp/unwind/stack_walker.h"

namespace gp::record {

// A copied sample: its key (as the BPF program's gp_sample_key) and its user stack copy.
struct StackCopySample {
  int32_t pid = 0;
  int32_t tid = 0;
  std::string comm;
  uint64_t kernel_stack_key = 0;  // in the slot's stack map (0: none)
  uint32_t slot = 0;
  unwind::UserRegisters regs;
  uint64_t stack_start = 0;  // regs.rsp less the red zone copied below it (bpf/profile.h)
  std::vector<uint8_t> stack;
  // The process had tables, but a pc of the BPF walk lay in a file mapping without one loaded
  // yet: a walk of the copy that does not reach the outermost frame is truncated there.
  bool pending_mapping = false;
  std::chrono::steady_clock::time_point received{};  // set by add()
  bool old_image = false;  // received before an exec of the process was known
  // Its Python frames (--python-frames), appended after the unwound native frames: a
  // GP_PY_MARKER entry and the entries it counts (python_frames.h), or empty.
  std::vector<uint64_t> python;
};

// A copied sample with its user stack unwound.
struct UnwoundSample {
  int32_t pid = 0;
  int32_t tid = 0;
  std::string comm;
  uint64_t kernel_stack_key = 0;
  unwind::WalkedStack user;
  bool with_tables = false;  // false: walked with frame pointers only (no tables in time)
  std::vector<uint64_t> python;  // StackCopySample::python
};

struct DeferredStats {
  uint64_t received = 0;   // copies received
  uint64_t bytes = 0;      // stack bytes they held
  uint64_t unwound = 0;    // unwound with the process's tables
  uint64_t complete = 0;   // ...to the outermost frame
  uint64_t truncated = 0;  // ...truncated (of which past the copy's end: copy_end)
  uint64_t copy_end = 0;
  uint64_t without_tables = 0;   // walked with frame pointers: no tables in time
  uint64_t pending_mapping = 0;  // copies of processes with tables, of a mapping without
  uint64_t carried = 0;          // times a copy waited on past its slot's drain
};

class DeferredStacks {
 public:
  // Unwinds a copy of pid's stack with its loaded tables; nullopt when pid has none loaded, or
  // (without `wait`) when they cannot be read without waiting for them to be changed. add()
  // does not wait (the recorder's thread); the others do.
  using Unwind = std::function<std::optional<unwind::WalkedStack>(
      int32_t pid, const unwind::UserRegisters& regs, const unwind::StackCopy& stack, bool wait)>;
  explicit DeferredStacks(Unwind unwind) : unwind_(std::move(unwind)) {}

  void add(StackCopySample copy);
  // pid's tables were loaded or changed: its waiting copies are unwound now if they can be.
  void tables_changed(int32_t pid);
  // pid's tables are about to go (its exit, or its exec): its waiting copies (after an exec,
  // those of the old image) are unwound now, with the tables if it has any, else with frame
  // pointers.
  void process_gone(int32_t pid, bool exited = true);
  // pid exec'd: the copies received so far are of its old image (the copies that follow wait for
  // the new image's tables). To be called in order with the copies (gp-record: a marker in the
  // copies' own ring): an old copy taken for the new image's would wait for tables that never
  // cover it. An old copy still waiting when the old image's tables are gone is walked with frame
  // pointers (without_tables).
  void image_replaced(int32_t pid);
  // Whether copies of `slot` still wait for tables.
  bool waiting(uint32_t slot) const;
  // The samples of `slot`, unwound; copies of it still waiting are walked with frame pointers,
  // or, with `carry`, those received less than kMaxWait ago wait on for the next drain (the
  // other slot's): a loaded host can take a second to load a new process's tables.
  std::vector<UnwoundSample> take(uint32_t slot, bool carry = false);
  static constexpr auto kMaxWait = std::chrono::seconds(2);
  DeferredStats stats() const;

 private:
  // Unwinds copy into done_ when `fallback` or pid's tables are there; false if it still waits.
  bool finish(StackCopySample& copy, bool fallback, bool wait = true);

  Unwind unwind_;
  mutable std::mutex mu_;
  std::unordered_map<int32_t, std::vector<StackCopySample>> waiting_;  // by pid
  std::vector<UnwoundSample> done_[2];                                 // by slot
  DeferredStats stats_;
};

}  // namespace gp::record
