#include "gp/merge/runtime.h"

#include <algorithm>
#include <set>

#include "../fold/stack_namer.h"
#include "copier.h"
#include "pid_samples.h"

namespace gp::merge {
namespace {

using detail::PidSamples;

// The runtime profiler's error for a pid: its process's error_frame, or gProfiler's form, a
// single stack made of one "[Profiling x: y]" frame. Empty when the profile is valid.
std::string runtime_error(const model::Session& rt, int32_t pid, const PidSamples* group) {
  if (const model::Process* p = rt.find_process(pid); p && !p->error_frame.empty())
    return p->error_frame;
  if (group == nullptr || group->samples.size() != 1) return {};
  fold::detail::StackNamer namer(rt);
  auto frames = detail::name_stack(namer, rt, group->samples[0]->stack_id).frames;
  if (frames.size() == 1 && is_profiling_error_frame(frames[0].name)) return frames[0].name;
  return {};
}

// The process entry after the merge: the runtime's, completed from the system's.
model::Process merged_process(const model::Process* sys, const model::Process* rt, int32_t pid) {
  model::Process p = rt ? *rt : (sys ? *sys : model::Process{});
  p.pid = pid;
  p.error_frame.clear();
  if (sys == nullptr) return p;
  if (p.container_name.empty()) p.container_name = sys->container_name;
  if (p.container_id.empty()) p.container_id = sys->container_id;
  if (p.comm.empty()) p.comm = sys->comm;
  if (p.exe.empty()) p.exe = sys->exe;
  if (p.cmdline.empty()) p.cmdline = sys->cmdline;
  if (p.ppid == 0) p.ppid = sys->ppid;
  if (p.start_time_ns == 0) p.start_time_ns = sys->start_time_ns;
  return p;
}

void set_error_frame(model::Session& sys, detail::Target& target, int32_t pid,
                     const std::string& frame) {
  model::Process p = sys.find_process(pid) ? *sys.find_process(pid) : model::Process{};
  p.pid = pid;
  p.error_frame = frame;
  target.builder().process(p);
}

// The pids the runtime session has something to say about, in order.
std::set<int32_t> runtime_pids(const model::Session& rt, const std::map<int32_t, PidSamples>& g) {
  std::set<int32_t> pids;
  for (const auto& [pid, group] : g) pids.insert(pid);
  for (const model::Process& p : rt.processes)
    if (!p.error_frame.empty()) pids.insert(p.pid);
  return pids;
}

// The pids whose system stacks already carry Python frames: gp-record walked them in its BPF
// program (--python-frames), so their stacks hold native and Python frames both.
std::set<int32_t> python_walked_pids(const model::Session& system) {
  std::vector<char> python_stack(system.stacks.size() + 1, 0);
  for (size_t id = 1; id <= system.stacks.size(); ++id)
    for (uint64_t loc : system.stack(id).location_ids)
      if (loc != 0 && system.location(loc).kind == model::FrameKind::python) {
        python_stack[id] = 1;
        break;
      }
  std::set<int32_t> pids;
  for (const model::Sample& s : system.samples)
    if (s.stack_id != 0 && s.stack_id < python_stack.size() && python_stack[s.stack_id])
      pids.insert(s.pid);
  return pids;
}

}  // namespace

bool is_profiling_error_frame(const std::string& name) {
  constexpr std::string_view kPrefix = "[Profiling ";
  if (name.size() < kPrefix.size() + 4 || name.compare(0, kPrefix.size(), kPrefix) != 0 ||
      name.back() != ']')
    return false;
  size_t colon = name.find(": ", kPrefix.size() + 1);
  return colon != std::string::npos && colon + 2 < name.size() - 1;
}

void merge_runtime(model::Session& system, const model::Session& runtime, uint64_t seed,
                   MergeStats& stats) {
  std::map<int32_t, PidSamples> sys_groups = detail::group_by_pid(system);
  std::map<int32_t, PidSamples> rt_groups = detail::group_by_pid(runtime);
  std::set<int32_t> replaced;
  std::vector<model::Sample> kept_samples;
  // Decide first, then rebuild the sample list once.
  std::vector<std::pair<int32_t, double>> to_copy;  // pid, ratio (0 = unscaled)
  const std::set<int32_t> walked = python_walked_pids(system);
  for (int32_t pid : runtime_pids(runtime, rt_groups)) {
    if (walked.count(pid)) {
      ++stats.runtime_pids_kept_native;
      continue;
    }
    auto rt_it = rt_groups.find(pid);
    const PidSamples* rt = rt_it == rt_groups.end() ? nullptr : &rt_it->second;
    auto sys_it = sys_groups.find(pid);
    uint64_t p_count = sys_it == sys_groups.end() ? 0 : sys_it->second.total;
    std::string error = runtime_error(runtime, pid, rt);
    if (!error.empty() || rt == nullptr) {
      if (p_count > 0 && !error.empty()) {
        to_copy.emplace_back(pid, -1);  // attach error frame
      } else {
        ++stats.runtime_pids_dropped;
      }
      continue;
    }
    if (p_count > 0) replaced.insert(pid);
    to_copy.emplace_back(pid, p_count > 0 ? static_cast<double>(p_count) / rt->total : 1.0);
  }
  for (const model::Sample& s : system.samples)
    if (!replaced.count(s.pid)) kept_samples.push_back(s);
  system.samples = std::move(kept_samples);

  detail::Target target(system);
  detail::Copier copier(runtime, target);
  // Re-intern the kept samples so the builder sums runtime samples into the same entries.
  std::vector<model::Sample> native;
  native.swap(system.samples);
  for (const model::Sample& s : native)
    target.builder().add_sample(s.pid, s.tid, s.stack_id, s.count, s.weight, s.cpu, s.comm);
  for (const auto& [pid, ratio] : to_copy) {
    if (ratio < 0) {
      set_error_frame(system, target, pid, runtime_error(runtime, pid, &rt_groups[pid]));
      ++stats.error_frames_attached;
      continue;
    }
    const model::Process* sys_p = system.find_process(pid);
    model::Process p = merged_process(sys_p, runtime.find_process(pid), pid);
    copier.threads(pid);
    target.builder().process(p);
    detail::copy_scaled(copier, pid, rt_groups.at(pid), ratio, seed);
    ++(replaced.count(pid) ? stats.runtime_pids_replaced : stats.runtime_pids_added);
  }
}

}  // namespace gp::merge
