#include "gp/merge/smart.h"

#include <set>

#include "../fold/stack_namer.h"
#include "copier.h"
#include "pid_samples.h"

namespace gp::merge {
namespace {

size_t unknown_frames(const std::vector<fold::Frame>& frames, size_t end) {
  size_t n = 0;
  for (size_t i = 0; i < end; ++i) {
    for (size_t at = frames[i].name.find("[unknown]"); at != std::string::npos;
         at = frames[i].name.find("[unknown]", at + 1))
      ++n;
  }
  return n;
}

}  // namespace

std::map<int32_t, double> average_frame_counts(const model::Session& s) {
  fold::detail::StackNamer namer(s);
  std::map<int32_t, std::set<uint64_t>> seen_stacks;
  std::map<int32_t, std::set<std::vector<std::string>>> distinct;
  std::map<int32_t, std::pair<double, size_t>> sums;
  for (const model::Sample& sample : s.samples) {
    if (sample.count == 0 || !seen_stacks[sample.pid].insert(sample.stack_id).second) continue;
    detail::NamedStack ns = detail::name_stack(namer, s, sample.stack_id);
    std::vector<std::string> key;
    for (const fold::Frame& f : ns.frames) key.push_back(f.name + fold::kind_suffix(f.kind));
    if (!distinct[sample.pid].insert(key).second) continue;
    size_t user = ns.frames.size() - ns.kernel_tail;
    // +1: the comm frame that starts every gProfiler stack.
    double frames =
        1.0 + static_cast<double>(user) - static_cast<double>(unknown_frames(ns.frames, user));
    sums[sample.pid].first += frames;
    ++sums[sample.pid].second;
  }
  std::map<int32_t, double> out;
  for (const auto& [pid, sum] : sums) out[pid] = sum.first / static_cast<double>(sum.second);
  return out;
}

model::Session merge_smart(const model::Session& fp, const model::Session& dwarf, uint64_t seed,
                           MergeStats& stats) {
  uint64_t total_fp = fp.total_samples(), total_dwarf = dwarf.total_samples();
  if (total_fp == 0 || total_dwarf == 0) return total_fp == 0 ? dwarf : fp;
  double ratio = static_cast<double>(total_fp) / static_cast<double>(total_dwarf);
  std::map<int32_t, double> fp_depth = average_frame_counts(fp);
  std::map<int32_t, double> dwarf_depth = average_frame_counts(dwarf);
  std::map<int32_t, detail::PidSamples> fp_groups = detail::group_by_pid(fp);
  std::map<int32_t, detail::PidSamples> dwarf_groups = detail::group_by_pid(dwarf);

  model::Session out;
  out.header = fp.header;
  out.header.sampling.mode = "smart";
  out.kernel_symbols = fp.kernel_symbols;
  out.jit_maps = fp.jit_maps;
  detail::Target target(out);
  detail::Copier from_fp(fp, target), from_dwarf(dwarf, target);
  for (const auto& [pid, group] : fp_groups) {
    auto d = dwarf_groups.find(pid);
    bool use_fp = d == dwarf_groups.end() || fp_depth[pid] > dwarf_depth[pid];
    if (use_fp) {
      from_fp.process(pid);
      detail::copy_scaled(from_fp, pid, group, 1.0, seed);
      ++stats.smart_pids_fp;
    } else {
      from_dwarf.process(pid);
      detail::copy_scaled(from_dwarf, pid, d->second, ratio, seed);
      ++stats.smart_pids_dwarf;
    }
  }
  for (const auto& [pid, group] : dwarf_groups)
    if (!fp_groups.count(pid)) ++stats.smart_pids_dropped;
  return out;
}

}  // namespace gp::merge
