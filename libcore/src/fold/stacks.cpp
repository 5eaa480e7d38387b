// fold_stacks: every sample of every session → unique named stacks, summed and sorted.
#include "gp/fold/stacks.h"

#include <algorithm>
#include <unordered_map>

#include "fold/stack_namer.h"

namespace gp::fold {
namespace {

using model::FrameKind;

// Frames are interned once; stacks are aggregated as sequences of frame ids, so a sample costs
// a few integer copies, and names are copied only into the final unique stacks.
class Aggregator {
 public:
  uint32_t intern(const Frame& f) {
    key_.assign(f.name);
    key_ += '\0';
    key_ += static_cast<char>(f.kind);
    auto [it, inserted] = frame_ids_.try_emplace(key_, static_cast<uint32_t>(frames_.size()));
    if (inserted) frames_.push_back(f);
    return it->second;
  }

  void add(const std::vector<uint32_t>& ids, uint64_t count) {
    key_.assign(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(uint32_t));
    auto [it, inserted] = stack_index_.try_emplace(key_, stacks_.size());
    if (inserted) stacks_.push_back({ids, count});
    else stacks_[it->second].second += count;
  }

  std::vector<FoldedStack> take_sorted() {
    auto less = [&](const std::pair<std::vector<uint32_t>, uint64_t>& a,
                    const std::pair<std::vector<uint32_t>, uint64_t>& b) {
      return std::lexicographical_compare(
          a.first.begin(), a.first.end(), b.first.begin(), b.first.end(), [&](uint32_t x, uint32_t y) {
            const Frame& fx = frames_[x];
            const Frame& fy = frames_[y];
            if (fx.name != fy.name) return fx.name < fy.name;
            return fx.kind < fy.kind;
          });
    };
    std::sort(stacks_.begin(), stacks_.end(), less);
    std::vector<FoldedStack> out;
    out.reserve(stacks_.size());
    for (const auto& [ids, count] : stacks_) {
      FoldedStack& st = out.emplace_back();
      st.count = count;
      st.frames.reserve(ids.size());
      for (uint32_t id : ids) st.frames.push_back(frames_[id]);
    }
    return out;
  }

 private:
  std::string key_;
  std::unordered_map<std::string, uint32_t> frame_ids_;
  std::vector<Frame> frames_;
  std::unordered_map<std::string, size_t> stack_index_;
  std::vector<std::pair<std::vector<uint32_t>, uint64_t>> stacks_;
};

// One session's stacks as interned frame ids, root first, with their kernel tails (cached).
class SessionFrames {
 public:
  SessionFrames(const model::Session& s, Aggregator& agg)
      : s_(s), namer_(s), agg_(agg), stacks_(s.stacks.size() + 1), locations_(s.locations.size() + 1) {}

  struct Stack {
    std::vector<uint32_t> ids;
    size_t kernel_tail = 0;
    bool done = false;
  };

  const Stack& stack(uint64_t id) {
    static const Stack kEmpty;
    if (id == 0 || id >= stacks_.size()) return kEmpty;
    Stack& st = stacks_[id];
    if (st.done) return st;
    st.done = true;
    const std::vector<uint64_t>& locs = s_.stack(id).location_ids;  // leaf first
    for (auto it = locs.rbegin(); it != locs.rend(); ++it) {
      const std::vector<uint32_t>& ids = location(*it);
      st.ids.insert(st.ids.end(), ids.begin(), ids.end());
      // Kernel frames sit at the leaf end (user code calls into the kernel, never back), so
      // the count restarts at every user frame.
      st.kernel_tail = namer_.location(*it).kernel ? st.kernel_tail + ids.size() : 0;
    }
    return st;
  }

 private:
  const std::vector<uint32_t>& location(uint64_t id) {
    static const std::vector<uint32_t> kNone;
    if (id >= locations_.size()) return kNone;
    std::vector<uint32_t>& ids = locations_[id];
    if (ids.empty())
      for (const Frame& f : namer_.location(id).frames) ids.push_back(agg_.intern(f));
    return ids;
  }

  const model::Session& s_;
  detail::StackNamer namer_;
  Aggregator& agg_;
  std::vector<Stack> stacks_;
  std::vector<std::vector<uint32_t>> locations_;
};

// The part of a stack the options keep: all, the user part or the kernel tail.
std::pair<size_t, size_t> kept_range(const SessionFrames::Stack& st, const StackOptions& o) {
  size_t n = st.ids.size();
  if (o.user_only) return {0, n - st.kernel_tail};
  if (o.kernel_only) return {n - st.kernel_tail, n};
  return {0, n};
}

void fold_session(const model::Session& s, const StackOptions& o, Aggregator& agg) {
  SessionFrames frames(s, agg);
  detail::ProcessTable procs(s);
  std::unordered_map<int64_t, std::vector<uint32_t>> prefixes;  // (pid, tid) → process frames
  std::vector<uint32_t> ids;
  for (const model::Sample& sample : s.samples) {
    if (sample.count == 0 || (sample.pid == 0 && !o.include_idle)) continue;
    const SessionFrames::Stack& st = frames.stack(sample.stack_id);
    auto [begin, end] = kept_range(st, o);
    // A user-only (kernel-only) view drops samples that have no user (kernel) frame at all.
    if ((o.user_only || o.kernel_only) && begin == end) continue;
    int64_t key = (static_cast<int64_t>(sample.pid) << 32) | static_cast<uint32_t>(sample.tid);
    auto [it, inserted] = prefixes.try_emplace(key);
    if (inserted) {
      if (o.process_frame) {
        it->second.push_back(agg.intern({detail::process_frame_name(procs, sample.pid, sample.tid,
                                                                     o.with_pid, o.with_tid),
                                         FrameKind::pseudo}));
      }
      const model::Process* p = procs.find(sample.pid);
      if (p != nullptr && !p->error_frame.empty())
        it->second.push_back(agg.intern({p->error_frame, FrameKind::pseudo}));
    }
    ids = it->second;
    ids.insert(ids.end(), st.ids.begin() + begin, st.ids.begin() + end);
    agg.add(ids, sample.count);
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
