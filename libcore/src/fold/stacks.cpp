// fold_stacks: every sample of every session → unique named stacks, summed and sorted.
#include "gp/fold/stacks.h"

#include <algorithm>
#include <unordered_map>

#include "fold/stack_namer.h"

namespace gp::fold {
namespace {

using model::FrameKind;

void append_key(const Frame& f, std::string& key) {
  key += f.name;
  key += '\0';
  key += static_cast<char>(f.kind);
}

bool frame_less(const Frame& a, const Frame& b) {
  if (a.name != b.name) return a.name < b.name;
  return a.kind < b.kind;
}

// The part of a named stack the options keep: all, the user part or the kernel tail.
std::pair<size_t, size_t> kept_range(const detail::NamedStack& ns, const StackOptions& o) {
  size_t n = ns.frames.size();
  if (o.user_only) return {0, n - ns.kernel_tail};
  if (o.kernel_only) return {n - ns.kernel_tail, n};
  return {0, n};
}

class Aggregator {
 public:
  void add(std::vector<Frame>& frames, uint64_t count) {
    key_.clear();
    for (const Frame& f : frames) append_key(f, key_);
    auto [it, inserted] = index_.try_emplace(key_, out_.size());
    if (inserted) out_.push_back({frames, count});
    else out_[it->second].count += count;
  }
  std::vector<FoldedStack> take_sorted() {
    std::sort(out_.begin(), out_.end(), [](const FoldedStack& a, const FoldedStack& b) {
      return std::lexicographical_compare(a.frames.begin(), a.frames.end(), b.frames.begin(),
                                          b.frames.end(), frame_less);
    });
    return std::move(out_);
  }

 private:
  std::string key_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<FoldedStack> out_;
};

void fold_session(const model::Session& s, const StackOptions& o, Aggregator& agg) {
  detail::StackNamer namer(s);
  detail::ProcessTable procs(s);
  std::vector<Frame> frames;
  for (const model::Sample& sample : s.samples) {
    if (sample.count == 0 || (sample.pid == 0 && !o.include_idle)) continue;
    const detail::NamedStack& ns = namer.stack(sample.stack_id);
    auto [begin, end] = kept_range(ns, o);
    // A user-only (kernel-only) view drops samples that have no user (kernel) frame at all.
    if ((o.user_only || o.kernel_only) && begin == end) continue;
    frames.clear();
    if (o.process_frame) {
      frames.push_back({detail::process_frame_name(procs, sample.pid, sample.tid, o.with_pid,
                                                   o.with_tid),
                        FrameKind::pseudo});
    }
    const model::Process* p = procs.find(sample.pid);
    if (p != nullptr && !p->error_frame.empty()) frames.push_back({p->error_frame, FrameKind::pseudo});
    frames.insert(frames.end(), ns.frames.begin() + begin, ns.frames.begin() + end);
    agg.add(frames, sample.count);
  }
}

}  // namespace

std::vector<FoldedStack> fold_stacks(const model::Archive& archive, const StackOptions& options) {
  Aggregator agg;
  for (const model::Session& s : archive.sessions) fold_session(s, options, agg);
  return agg.take_sorted();
}

const char* kind_suffix(model::FrameKind kind) {
  switch (kind) {
    case FrameKind::kernel: return "_[k]";
    case FrameKind::java: return "_[j]";
    case FrameKind::python: return "_[p]";
    case FrameKind::python_native: return "_[pn]";
    case FrameKind::ruby: return "_[rb]";
    case FrameKind::php: return "_[php]";
    case FrameKind::dotnet: return "_[net]";
    case FrameKind::inlined: return "_[i]";
    default: return "";
  }
}

}  // namespace gp::fold
