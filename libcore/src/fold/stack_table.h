#pragma once
// Sample aggregation on integer ids (internal to libcore/src/fold), shared by every text format
// (.col, folded) and fold_stacks: frames are interned once by raw name and kind, stacks and
// line prefixes become interned sequences of frame ids, and a sample adds its count under its
// (prefix, stack) pair. Names are spelled only for the distinct frames and lines at the end —
// a few thousand lines against a million samples — and no string is held per stack.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gp/model/session.h"
#include "gp/model/string_table.h"
#include "gp/util/pair_map.h"

namespace gp::fold::detail {

using util::PairMap;

class StackTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The id of a frame (raw name, not escaped, and kind), interned on first use.
  uint32_t frame(std::string_view name, model::FrameKind kind);
  size_t frame_count() const { return names_.size(); }
  const std::string& frame_name(uint32_t id) const { return names_[id]; }
  model::FrameKind frame_kind(uint32_t id) const { return kinds_[id]; }

  // The id of a sequence of frame ids (root first), interned on first use.
  uint32_t sequence(std::span<const uint32_t> frames);
  std::span<const uint32_t> sequence_frames(uint32_t id) const {
    return {seq_frames_.data() + seq_begin_[id], seq_frames_.data() + seq_begin_[id + 1]};
  }

  // Adds `count` samples to the line `prefix` + `stack` (both sequence ids).
  void add(uint32_t prefix, uint32_t stack, uint64_t count);

  struct Line {
    uint32_t prefix;
    uint32_t stack;
    uint64_t count;
  };
  // The distinct (prefix, stack) pairs with their summed counts, in no particular order.
  std::vector<Line> lines() const;

 private:
  std::string key_;                         // reused lookup key
  model::StringTable<uint32_t> frame_ids_;  // kind byte + raw name → frame id
  std::vector<std::string> names_;
  std::vector<model::FrameKind> kinds_;
  model::StringTable<uint32_t> seq_ids_;  // frame id bytes → sequence id
  std::vector<uint32_t> seq_begin_{0}, seq_frames_;
  PairMap<void, uint64_t> lines_;  // prefix << 32 | stack → count
};

// Every line as text — its frames (prefix, then stack) spelled by frame_texts[id] and joined
// by ';' — sorted by text, with lines that spell the same summed (two raw names can escape to
// one text, and unannotated frames of different kinds print alike).
std::vector<std::pair<std::string, uint64_t>> text_lines(
    const StackTable& table, const std::vector<std::string>& frame_texts);

// The text of every frame of the table as a `.col`/folded field, with its kind suffix or not.
std::vector<std::string> field_texts(const StackTable& table, bool kind_suffixes);

}  // namespace gp::fold::detail
