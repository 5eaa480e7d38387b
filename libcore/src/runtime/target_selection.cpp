#include "runtime/target_selection.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "gp/proc/process.h"

namespace gp::runtime::detail {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

std::string seconds_text(nanoseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(d.count()) / 1e9);
  return text;
}

// Keeps the `room` busiest of `candidates` (CPU time over 0.1 s); the rest go to left_out.
std::vector<Target> busiest(std::vector<Target> candidates, size_t room, size_t limit,
                            const std::string& proc_root, std::vector<LeftOut>& left_out) {
  std::vector<nanoseconds> before(candidates.size(), nanoseconds(-1));
  for (size_t i = 0; i < candidates.size(); ++i)
    if (auto t = proc::process_cpu_time(candidates[i].pid, proc_root)) before[i] = *t;
  std::this_thread::sleep_for(milliseconds(100));
  std::vector<std::pair<nanoseconds, size_t>> ranked;  // (CPU used, index); gone ones last
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto after = proc::process_cpu_time(candidates[i].pid, proc_root);
    nanoseconds used = after && before[i].count() >= 0 ? *after - before[i] : nanoseconds(-1);
    ranked.emplace_back(used, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Target> kept;
  for (size_t r = 0; r < ranked.size(); ++r) {
    Target& t = candidates[ranked[r].second];
    if (r < room) {
      kept.push_back(std::move(t));
      continue;
    }
    double percent = std::max<double>(0, static_cast<double>(ranked[r].first.count())) / 1e8 * 100;
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", percent);
    std::string why = "not among the " + std::to_string(limit) + " busiest " +
                      std::string(runtime_name(t.runtime)) + " processes (" + text + "% CPU)";
    left_out.push_back({std::move(t), std::move(why)});
  }
  return kept;
}

}  // namespace

std::vector<Target> select_targets(std::vector<Target> found, const SelectionLimits& limits,
                                   std::map<Runtime, size_t>& profiled,
                                   std::vector<LeftOut>& left_out) {
  std::map<Runtime, std::vector<Target>> by_runtime;
  for (Target& t : found) {
    if (limits.min_age.count() > 0) {
      auto age = proc::process_age(t.pid, limits.proc_root);
      if (age && *age < limits.min_age) {
        std::string why = "it started " + seconds_text(*age) + " s ago (minimum age " +
                          std::to_string(limits.min_age.count()) + " s)";
        left_out.push_back({std::move(t), std::move(why)});
        continue;
      }
    }
    by_runtime[t.runtime].push_back(std::move(t));
  }
  std::vector<Target> chosen;
  for (auto& [runtime, targets] : by_runtime) {
    size_t& count = profiled[runtime];
    if (limits.max_per_runtime != 0 && count + targets.size() > limits.max_per_runtime) {
      size_t room = limits.max_per_runtime > count ? limits.max_per_runtime - count : 0;
      targets =
          busiest(std::move(targets), room, limits.max_per_runtime, limits.proc_root, left_out);
    }
    count += targets.size();
    for (Target& t : targets) chosen.push_back(std::move(t));
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Target& a, const Target& b) { return a.pid < b.pid; });
  return chosen;
}

}  // namespace gp::runtime::detail
