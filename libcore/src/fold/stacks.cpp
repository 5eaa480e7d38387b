// fold_stacks: every sample of every session → unique named stacks, summed and sorted.
#include "gp/fold/stacks.h"

#include <algorithm>

#include "fold/session_stacks.h"

namespace gp::fold {

using model::FrameKind;

namespace detail {

void add_stacks(const model::Archive& archive, const StackOptions& o, bool kernel_delimiter,
                StackTable& table) {
  StackView view{o.user_only,    o.kernel_only,      kernel_delimiter,
                 o.include_idle, o.truncated_marker, o.insert_dso_name};
  for (const model::Session& s : archive.sessions) {
    ProcessTable procs(s);
    SessionStacks(s, table, view)
        .add_samples([&](const model::Sample& smp, std::vector<uint32_t>& frames) {
          if (o.process_frame) {
            frames.push_back(table.frame(process_frame_name(procs, smp, o.with_pid, o.with_tid),
                                         FrameKind::pseudo));
          }
          const model::Process* p = procs.find(smp.pid);
          if (p != nullptr && !p->error_frame.empty())
            frames.push_back(table.frame(p->error_frame, FrameKind::pseudo));
        });
  }
}

}  // namespace detail

std::vector<FoldedStack> fold_stacks(const model::Archive& archive, const StackOptions& options) {
  detail::StackTable table;
  detail::add_stacks(archive, options, false, table);
  // Each line's frames in one list: a prefix and a stack can spell the same frames as another
  // pair (an error frame in the prefix, or at the root of a stack), and those are one stack.
  std::vector<std::pair<std::vector<uint32_t>, uint64_t>> stacks;
  for (const detail::StackTable::Line& l : table.lines()) {
    auto& [ids, count] = stacks.emplace_back();
    for (uint32_t seq : {l.prefix, l.stack}) {
      auto frames = table.sequence_frames(seq);
      ids.insert(ids.end(), frames.begin(), frames.end());
    }
    count = l.count;
  }
  auto frame_less = [&](uint32_t x, uint32_t y) {
    if (x == y) return false;
    const std::string& nx = table.frame_name(x);
    const std::string& ny = table.frame_name(y);
    if (nx != ny) return nx < ny;
    return table.frame_kind(x) < table.frame_kind(y);
  };
  std::sort(stacks.begin(), stacks.end(), [&](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.first.begin(), a.first.end(), b.first.begin(),
                                        b.first.end(), frame_less);
  });
  std::vector<FoldedStack> out;
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (i > 0 && stacks[i].first == stacks[i - 1].first) {
      out.back().count += stacks[i].second;
      continue;
    }
    FoldedStack& st = out.emplace_back();
    st.count = stacks[i].second;
    st.frames.reserve(stacks[i].first.size());
    for (uint32_t id : stacks[i].first)
      st.frames.push_back({table.frame_name(id), table.frame_kind(id)});
  }
  return out;
}

uint64_t truncated_samples(const model::Archive& archive) {
  uint64_t n = 0;
  for (const model::Session& s : archive.sessions) {
    for (const model::Sample& smp : s.samples) {
      if (smp.stack_id != 0 && smp.stack_id <= s.stacks.size() &&
          s.stack(smp.stack_id).end == model::StackEnd::truncated)
        n += smp.count;
    }
  }
  return n;
}

bool mostly_unsymbolized(const model::Archive& archive) {
  uint64_t unnamed = 0, total = 0;
  for (const model::Session& s : archive.sessions) {
    for (const model::Location& loc : s.locations) {
      ++total;
      if (loc.lines.empty() && loc.status == model::SymbolStatus::unsymbolized) ++unnamed;
    }
  }
  return total > 0 && unnamed * 2 > total;
}

const char* kind_suffix(model::FrameKind kind) {
  switch (kind) {
    case FrameKind::kernel:
      return "_[k]";
    case FrameKind::java:
      return "_[j]";
    case FrameKind::python:
      return "_[p]";
    case FrameKind::python_native:
      return "_[pn]";
    case FrameKind::ruby:
      return "_[rb]";
    case FrameKind::php:
      return "_[php]";
    case FrameKind::dotnet:
      return "_[net]";
    case FrameKind::inlined:
      return "_[i]";
    default:
      return "";
  }
}

}  // namespace gp::fold
