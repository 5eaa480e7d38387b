#pragma once
// Folding sessions to stacks of named frames: the shared step behind every text format
// (.col, folded, speedscope) and gp-flame.

#include <cstdint>
#include <string>
#include <vector>

#include "gp/model/session.h"

namespace gp::fold {

struct Frame {
  std::string name;  // display name, without any `_[x]` suffix
  model::FrameKind kind = model::FrameKind::unknown;
};

// One unique stack: frames root first, with its summed sample count.
struct FoldedStack {
  std::vector<Frame> frames;
  uint64_t count = 0;
};

// How a stack starts: gp-flame (like gProfiler's flamegraph) shows the comm as the root's
// children; the folded format can add pid/tid to that frame.
struct StackOptions {
  bool process_frame = true;  // first frame: comm (kind pseudo)
  bool with_pid = false;      // "comm-PID" (bcc/perf style)
  bool with_tid = false;      // "comm-PID/TID"
  bool include_idle = true;   // pid 0 (swapper) samples
  bool user_only = false;
  bool kernel_only = false;
  // A stack whose user part was cut (model::StackEnd::truncated) starts with a kTruncatedFrame
  // (kind pseudo) after the line's process and error frames, so its outermost real frame is
  // not taken for a root. Kernel-only views never show it: the kernel stack is whole.
  bool truncated_marker = true;
  // Symbolized native frames are "name (dso)", as gProfiler's --insert-dso-name.
  bool insert_dso_name = false;
};

// The pseudo-frame that stands at the root end of a truncated stack.
inline constexpr const char* kTruncatedFrame = "[truncated]";

// Samples (summed counts) whose stack is marked truncated, over every session: for summaries.
uint64_t truncated_samples(const model::Archive& archive);

// All samples of all sessions, aggregated by identical frame sequence and sorted by frames
// (deterministic). Unsymbolized frames are named as gProfiler/perf do ("(dso)", "[unknown]").
std::vector<FoldedStack> fold_stacks(const model::Archive& archive, const StackOptions& options);

// True when most locations of the archive were never symbolized (no name, status
// unsymbolized): a gp-record archive read before gp-symbolize. Its folds would be mostly
// "(dso)" and "[unknown]" frames; tools say so and name the command that fixes it.
bool mostly_unsymbolized(const model::Archive& archive);

// gProfiler's suffix for a frame kind: "_[k]", "_[j]", "_[p]", "_[pn]", "_[rb]", "_[php]",
// "_[net]", "_[i]" (inlined); "" for native, go, node, jit and unknown.
const char* kind_suffix(model::FrameKind kind);

}  // namespace gp::fold
