#include "fold/session_stacks.h"

namespace gp::fold::detail {

using model::FrameKind;

SessionStacks::SessionStacks(const model::Session& s, StackTable& table, const StackView& view)
    : s_(s),
      table_(table),
      view_(view),
      namer_(s, view.insert_dso_name),
      stack_seq_(s.stacks.size() + 1, StackTable::kNone),
      locations_(s.locations.size() + 1) {
  if (view.kernel_delimiter) delimiter_ = table.frame("-", FrameKind::pseudo);
  if (view.truncated_marker && !view.kernel_only)
    truncated_ = table.frame(kTruncatedFrame, FrameKind::pseudo);
}

uint32_t SessionStacks::stack(uint64_t id) {
  uint32_t& seq = id != 0 && id < stack_seq_.size() ? stack_seq_[id] : invalid_stack_seq_;
  if (seq == StackTable::kNone) seq = make_stack(id);
  return seq;
}

uint32_t SessionStacks::make_stack(uint64_t id) {
  frames_.clear();
  size_t kernel_tail = 0;
  bool mark = false;  // a cut user stack under the marker
  if (id != 0 && id < stack_seq_.size()) {
    mark = truncated_ != StackTable::kNone && s_.stack(id).end == model::StackEnd::truncated;
    const std::vector<uint64_t>& locs = s_.stack(id).location_ids;  // leaf first
    for (auto it = locs.rbegin(); it != locs.rend(); ++it) {
      size_t before = frames_.size();
      // Kernel frames sit at the leaf end (user code calls into the kernel, never back), so
      // the tail restarts at every user location.
      if (append_location(*it, frames_)) kernel_tail += frames_.size() - before;
      else kernel_tail = 0;
    }
  }
  size_t begin = 0, end = frames_.size();
  if (view_.user_only) end -= kernel_tail;
  if (view_.kernel_only) begin = end - kernel_tail;
  // A user-only (kernel-only) view drops stacks that have no user (kernel) frame at all.
  if ((view_.user_only || view_.kernel_only) && begin == end) return kDropped;
  if (!view_.kernel_delimiter && !mark)
    return table_.sequence(std::span(frames_).subspan(begin, end - begin));
  frames_.erase(frames_.begin() + static_cast<std::ptrdiff_t>(end), frames_.end());
  frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(begin));
  // The marker is the root of the stack's own frames: the line's prefix (comm, error frame)
  // stays above it, the outermost frame that was reached comes below it.
  if (mark) frames_.insert(frames_.begin(), truncated_);
  if (view_.kernel_delimiter) insert_delimiter(frames_);
  return table_.sequence(frames_);
}

bool SessionStacks::append_location(uint64_t id, std::vector<uint32_t>& out) {
  if (id >= locations_.size()) {  // not a location of this session
    out.push_back(table_.frame("[unknown]", FrameKind::unknown));
    return false;
  }
  LocationFrames& loc = locations_[id];
  if (loc.begin == StackTable::kNone) {
    loc.begin = static_cast<uint32_t>(location_frames_.size());
    loc.kernel = namer_.for_each_frame(id, [&](std::string_view name, FrameKind kind) {
      location_frames_.push_back(frame(name, kind));
    });
    loc.count = static_cast<uint32_t>(location_frames_.size() - loc.begin) & 0x7fffffff;
  }
  if (loc.count == 1)
    out.push_back(location_frames_[loc.begin]);  // most locations: no memmove call
  else
    out.insert(out.end(), location_frames_.begin() + loc.begin,
               location_frames_.begin() + loc.begin + loc.count);
  return loc.kernel != 0;
}

// The namer's names are stable strings (function names, its composed DSO and Python names),
// so a frame is found by pointer first and its text hashed once per distinct string.
uint32_t SessionStacks::frame(std::string_view name, FrameKind kind) {
  auto [id, inserted] = name_frames_.try_insert(reinterpret_cast<uintptr_t>(name.data()),
                                                (name.size() << 8) | static_cast<uint8_t>(kind), 0);
  if (inserted) *id = table_.frame(name, kind);
  return *id;
}

// bcc's -d: "-" before the first kernel frame that follows a user one. Frame kinds decide, as
// the folded text shows them (an inlined frame in the kernel counts as user code).
void SessionStacks::insert_delimiter(std::vector<uint32_t>& frames) const {
  bool seen_user = false;
  for (size_t i = 0; i < frames.size(); ++i) {
    FrameKind kind = table_.frame_kind(frames[i]);
    if (kind == FrameKind::kernel && seen_user) {
      frames.insert(frames.begin() + static_cast<std::ptrdiff_t>(i), delimiter_);
      return;
    }
    if (kind != FrameKind::kernel && kind != FrameKind::pseudo) seen_user = true;
  }
}

}  // namespace gp::fold::detail
