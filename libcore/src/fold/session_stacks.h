#pragma once
// One session's samples into a StackTable (internal to libcore/src/fold): locations are named
// once (their frame ids cached), stacks become sequences once per stack id, and line prefixes
// once per (pid, tid); a sample then costs a few array reads and one hash probe.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fold/stack_namer.h"
#include "fold/stack_table.h"

namespace gp::fold::detail {

// Which part of each stack is kept, and how it is marked.
struct StackView {
  bool user_only = false;         // frames up to the kernel tail; stacks without any are dropped
  bool kernel_only = false;       // the kernel tail only; stacks without one are dropped
  bool kernel_delimiter = false;  // a "-" frame where the user part ends and the kernel begins
  bool include_idle = true;       // pid 0 (swapper) samples
  bool truncated_marker = true;   // kTruncatedFrame at the root of truncated stacks
  bool insert_dso_name = false;   // native frames "name (dso)" (StackNamer)
};

class SessionStacks {
 public:
  SessionStacks(const model::Session& s, StackTable& table, const StackView& view);

  // Adds every sample with a count under the view. make_prefix(sample, frames) appends the
  // frame ids that start the lines of the sample's (pid, tid, comm); it is called once per
  // distinct triple.
  template <typename MakePrefix>
  void add_samples(MakePrefix&& make_prefix);

 private:
  static constexpr uint32_t kDropped = StackTable::kNone - 1;

  // The sequence of stack `id` root first under the view, or kDropped.
  uint32_t stack(uint64_t id);
  uint32_t make_stack(uint64_t id);
  // Appends the frames of location `id` (outermost first); returns whether it is a kernel one.
  bool append_location(uint64_t id, std::vector<uint32_t>& out);
  uint32_t frame(std::string_view name, model::FrameKind kind);
  void insert_delimiter(std::vector<uint32_t>& frames) const;

  const model::Session& s_;
  StackTable& table_;
  StackView view_;
  StackNamer namer_;
  uint32_t delimiter_ = StackTable::kNone;          // the "-" frame
  uint32_t truncated_ = StackTable::kNone;          // the "[truncated]" frame
  std::vector<uint32_t> stack_seq_;                 // stack id → sequence (kNone: not yet)
  uint32_t invalid_stack_seq_ = StackTable::kNone;  // for ids outside the session
  // Location id → its frames in location_frames_, in one word: one cache miss per lookup.
  struct LocationFrames {
    uint32_t begin = StackTable::kNone;
    uint32_t count : 31 = 0;
    uint32_t kernel : 1 = 0;
  };
  std::vector<LocationFrames> locations_;
  std::vector<uint32_t> location_frames_;
  PairMap<uint64_t, uint32_t> name_frames_;       // (name pointer, size << 8 | kind) → frame id
  std::vector<uint32_t> frames_, prefix_frames_;  // scratch
};

template <typename MakePrefix>
void SessionStacks::add_samples(MakePrefix&& make_prefix) {
  std::unordered_map<std::string, uint32_t> prefixes;  // (pid, tid, comm) → sequence
  std::string key;
  const model::Sample* last = nullptr;
  uint32_t last_prefix = StackTable::kNone;
  for (const model::Sample& smp : s_.samples) {
    if (smp.count == 0 || (smp.pid == 0 && !view_.include_idle)) continue;
    uint32_t seq = stack(smp.stack_id);
    if (seq == kDropped) continue;
    if (last == nullptr || smp.pid != last->pid || smp.tid != last->tid || smp.comm != last->comm) {
      key.assign(reinterpret_cast<const char*>(&smp.pid), sizeof smp.pid);
      key.append(reinterpret_cast<const char*>(&smp.tid), sizeof smp.tid);
      key.append(smp.comm);
      auto [it, inserted] = prefixes.try_emplace(key, StackTable::kNone);
      if (inserted) {
        prefix_frames_.clear();
        make_prefix(smp, prefix_frames_);
        it->second = table_.sequence(prefix_frames_);
      }
      last = &smp;
      last_prefix = it->second;
    }
    table_.add(last_prefix, seq, smp.count);
  }
}

// Adds the samples of every session of `archive` as fold_stacks shapes them: the lines of
// (pid, tid) start with the process frame (when asked) and the process's error frame.
void add_stacks(const model::Archive& archive, const StackOptions& options, bool kernel_delimiter,
                StackTable& table);

}  // namespace gp::fold::detail
