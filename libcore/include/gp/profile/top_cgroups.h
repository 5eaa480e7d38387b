#pragma once
// gProfiler's --perf-use-cgroups: gp-record samples only the busiest cgroups of the host
// (gprofiler/utils/cgroup_utils.py get_top_cgroup_names_for_perf). gp ranks the cgroup v2
// directories that hold processes by the CPU time they used since the previous reading
// (cpu.stat usage_usec). gProfiler ranks every cgroup, parents too, by its lifetime CPU (x10)
// plus its memory: a parent such as system.slice then covers all its children, and a cgroup
// busy long ago outranks one busy now. With --perf-max-docker-containers N, the N busiest Docker
// containers come first, as in gProfiler, then other cgroups up to the limit.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gp::profile {

inline constexpr size_t kMaxRecordCgroups = 64;  // gp-record takes at most 64 --cgroup

// Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
// hybrid host), from /proc/self/mounts; "" when there is none.
std::string cgroup2_mount(const std::string& mounts_file = "/proc/self/mounts");

// usage_usec of cpu.stat, by cgroup directory, for the cgroups under `root` that hold processes
// of their own (cgroup.procs not empty). The root itself is not a candidate.
std::map<std::string, uint64_t> read_cgroup_cpu(const std::string& root);

// A Docker container's cgroup: ".../docker-<64 hex>.scope" or ".../docker/<64 hex>".
bool is_docker_cgroup(const std::string& path);

// The cgroups to sample: the `max_docker` busiest Docker containers (when > 0), then the
// busiest other cgroups, `max_cgroups` in all, busiest first. CPU is `after` - `before` (a
// cgroup new in `after` counts from 0); cgroups that used no CPU in between are left out.
std::vector<std::string> busiest_cgroups(const std::map<std::string, uint64_t>& before,
                                         const std::map<std::string, uint64_t>& after,
                                         size_t max_cgroups, size_t max_docker);

// The ranking across sessions: each call compares with the previous one (the first waits
// `first_window` for a reading to compare with).
class CgroupRanking {
 public:
  explicit CgroupRanking(std::string root = cgroup2_mount(),
                         std::chrono::milliseconds first_window = std::chrono::seconds(1))
      : root_(std::move(root)), first_window_(first_window) {}
  std::vector<std::string> top(size_t max_cgroups, size_t max_docker);
  // The last top() chose other cgroups than the one before (a running recorder must restart).
  bool changed() const { return changed_; }

 private:
  std::string root_;
  std::chrono::milliseconds first_window_;
  std::map<std::string, uint64_t> last_;
  bool have_last_ = false;
  std::vector<std::string> chosen_;
  bool changed_ = false;
};

}  // namespace gp::profile
