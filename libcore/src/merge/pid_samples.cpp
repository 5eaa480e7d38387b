#include "pid_samples.h"

#include <algorithm>
#include <numeric>

namespace gp::merge::detail {

NamedStack name_stack(fold::detail::StackNamer& namer, const model::Session& s, uint64_t id) {
  NamedStack out;
  if (id == 0 || id > s.stacks.size()) return out;
  const std::vector<uint64_t>& ids = s.stack(id).location_ids;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    const fold::detail::NamedLocation& loc = namer.location(*it);
    out.frames.insert(out.frames.end(), loc.frames.begin(), loc.frames.end());
  }
  for (uint64_t loc_id : ids) {  // leaf first
    const fold::detail::NamedLocation& loc = namer.location(loc_id);
    if (!loc.kernel) break;
    out.kernel_tail += loc.frames.size();
  }
  return out;
}

std::map<int32_t, PidSamples> group_by_pid(const model::Session& s) {
  fold::detail::StackNamer namer(s);
  std::map<int32_t, std::vector<std::pair<std::string, const model::Sample*>>> raw;
  for (const model::Sample& sample : s.samples) {
    if (sample.count == 0) continue;
    std::string key;
    for (const fold::Frame& f : name_stack(namer, s, sample.stack_id).frames) {
      key += f.name;
      key += '\x1f';
      key += static_cast<char>(f.kind);
      key += '\x1e';
    }
    // Equal frames with another end are another stack: ordered by end too, not by input order.
    if (sample.stack_id != 0 && sample.stack_id <= s.stacks.size())
      key += static_cast<char>(s.stack(sample.stack_id).end);
    raw[sample.pid].emplace_back(std::move(key), &sample);
  }
  std::map<int32_t, PidSamples> out;
  for (auto& [pid, entries] : raw) {
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return a.second->tid < b.second->tid;
    });
    PidSamples& g = out[pid];
    for (auto& [key, sample] : entries) {
      g.keys.push_back(std::move(key));
      g.samples.push_back(sample);
      g.total += sample->count;
    }
  }
  return out;
}

void copy_scaled(Copier& copier, int32_t pid, const PidSamples& group, double ratio,
                 uint64_t seed) {
  Rounder rounder(seed, pid);
  for (const model::Sample* s : group.samples) copier.sample(*s, rounder.scale(s->count, ratio));
}

}  // namespace gp::merge::detail
