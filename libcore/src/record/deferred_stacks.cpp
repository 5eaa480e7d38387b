// DeferredStacks: copies waiting for their process's tables, and the samples unwound from them.
#include "gp/record/deferred_stacks.h"

namespace gp::record {
namespace {

// No rules at all: every frame is a frame-pointer step through the copy.
class NoRules final : public unwind::RuleSource {
 public:
  std::optional<unwind::PackedRule> rule_at(uint64_t) const override { return std::nullopt; }
};

}  // namespace

bool DeferredStacks::finish(StackCopySample& copy, bool fallback, bool wait) {
  const unwind::StackCopy stack{copy.stack_start, copy.stack};
  std::optional<unwind::WalkedStack> walked =
      unwind_ ? unwind_(copy.pid, copy.regs, stack, wait) : std::nullopt;
  // A walk that does not reach the outermost frame may lack a table (a library mapped after the
  // mappings were read: a follow-up read loads it): it waits for the next load, until the drain.
  // One that met no address without a table (it ended in a gap of a table: ld.so's entry point,
  // which no FDE covers, with rbp 0) is what the BPF walk gives now: no load would change it.
  const bool lacks_table = walked && walked->end != unwind::WalkEnd::complete &&
                           walked->untabled_frames > 0;
  if (walked && !fallback && lacks_table) return false;
  const bool with_tables = walked.has_value();
  if (!walked) {
    if (!fallback) return false;
    walked = unwind::walk_stack(copy.regs, stack, NoRules{});
    // Code without frame pointers leaves rbp at 0 or at anything: as the BPF program's walk
    // before tables (walk_user_frames with mark_end), only a chain of one frame record at least
    // that ends at a zero frame pointer or return address is not marked truncated.
    if (!(walked->end == unwind::WalkEnd::unknown && walked->frames.size() >= 2))
      walked->end = unwind::WalkEnd::truncated;
    ++stats_.without_tables;
  } else {
    // The mapping the BPF walk met still has no table: its frames took frame-pointer steps.
    if (copy.pending_mapping && lacks_table)
      walked->end = unwind::WalkEnd::truncated;
    ++stats_.unwound;
    if (walked->end == unwind::WalkEnd::complete) ++stats_.complete;
    if (walked->end == unwind::WalkEnd::truncated) ++stats_.truncated;
    if (walked->stop == unwind::WalkStop::read) ++stats_.copy_end;
  }
  done_[copy.slot & 1].push_back(UnwoundSample{copy.pid, copy.tid, std::move(copy.comm),
                                               copy.kernel_stack_key, std::move(*walked),
                                               with_tables, std::move(copy.python)});
  return true;
}

void DeferredStacks::add(StackCopySample copy) {
  std::lock_guard lock(mu_);
  ++stats_.received;
  stats_.bytes += copy.stack.size();
  if (copy.received == std::chrono::steady_clock::time_point{})
    copy.received = std::chrono::steady_clock::now();
  if (copy.pending_mapping) ++stats_.pending_mapping;
  if (finish(copy, false, false)) return;
  waiting_[copy.pid].push_back(std::move(copy));
}

void DeferredStacks::tables_changed(int32_t pid) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(pid);
  if (it == waiting_.end()) return;
  auto& copies = it->second;
  std::vector<StackCopySample> keep;
  for (auto& copy : copies)
    if (!finish(copy, false)) keep.push_back(std::move(copy));
  if (keep.empty()) waiting_.erase(it);
  else copies = std::move(keep);
}

void DeferredStacks::process_gone(int32_t pid, bool exited) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(pid);
  if (it == waiting_.end()) return;
  std::vector<StackCopySample> keep;
  for (auto& copy : it->second) {
    if (exited || copy.old_image) finish(copy, true);
    else keep.push_back(std::move(copy));
  }
  if (keep.empty()) waiting_.erase(it);
  else it->second = std::move(keep);
}

void DeferredStacks::image_replaced(int32_t pid) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(pid);
  if (it == waiting_.end()) return;
  for (auto& copy : it->second) copy.old_image = true;
}

bool DeferredStacks::waiting(uint32_t slot) const {
  std::lock_guard lock(mu_);
  for (const auto& [pid, copies] : waiting_)
    for (const auto& copy : copies)
      if ((copy.slot & 1) == (slot & 1)) return true;
  return false;
}

std::vector<UnwoundSample> DeferredStacks::take(uint32_t slot, bool carry) {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto& copies = it->second;
    std::vector<StackCopySample> keep;
    for (auto& copy : copies) {
      if ((copy.slot & 1) != (slot & 1)) {
        keep.push_back(std::move(copy));
      } else if (carry && now - copy.received < kMaxWait) {
        copy.slot ^= 1;
        ++stats_.carried;
        keep.push_back(std::move(copy));
      } else {
        finish(copy, true);
      }
    }
    if (keep.empty()) it = waiting_.erase(it);
    else {
      copies = std::move(keep);
      ++it;
    }
  }
  return std::exchange(done_[slot & 1], {});
}

DeferredStats DeferredStacks::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace gp::record
