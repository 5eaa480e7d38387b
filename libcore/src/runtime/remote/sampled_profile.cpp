#include "runtime/remote/sampled_profile.h"

#include <algorithm>

#include "runtime/remote/sampling_clock.h"

namespace gp::runtime::remote {

int limited_frequency(const SessionParams& params, int max, std::string_view runtime,
                      Profile& out) {
  if (params.frequency_hz > max) {
    out.warnings.push_back(std::string(runtime) + " sampling frequency limited to " +
                           std::to_string(max) + " Hz (asked " +
                           std::to_string(params.frequency_hz) + " Hz), as gProfiler does");
  }
  return std::clamp(params.frequency_hz, 1, max);
}

void StackCounter::add(int32_t tid, std::vector<Frame> frames) {
  Key key{tid, {}};
  auto& fields = std::get<1>(key);
  fields.reserve(frames.size());
  for (const Frame& f : frames)
    fields.emplace_back(static_cast<int>(f.kind), f.name, f.file, f.start_line, f.line);
  auto [it, fresh] = stacks_.try_emplace(std::move(key));
  if (fresh) {
    Stack& s = it->second;
    s.tid = tid;
    if (tid != 0) s.thread_name = names_.try_emplace(tid, thread_name(pid_, tid)).first->second;
    s.frames = std::move(frames);
  }
  ++it->second.count;
}

std::vector<Stack> StackCounter::take() {
  std::vector<Stack> out;
  out.reserve(stacks_.size());
  for (auto& [key, s] : stacks_) out.push_back(std::move(s));
  stacks_.clear();
  return out;
}

std::string lost_process_frame(WalkStatus status) {
  return status == WalkStatus::gone
             ? error_frame("process went down during profiling")
             : error_frame("cannot read the process's memory: permission denied");
}

std::optional<std::string> dropped_samples_warning(uint64_t given_up, uint64_t snapshots,
                                                   std::string_view runtime, std::string_view why) {
  uint64_t ticks = snapshots + given_up;
  if (given_up == 0 || given_up * 10 <= ticks) return std::nullopt;
  return std::to_string(given_up) + " of " + std::to_string(ticks) + " " + std::string(runtime) +
         " samples were dropped (" + std::string(why) + ")";
}

}  // namespace gp::runtime::remote
