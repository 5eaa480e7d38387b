// The busiest cgroups for gp-record's --cgroup (see top_cgroups.h).
#include "gp/profile/top_cgroups.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace gp::profile {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool usage_usec(const std::string& cpu_stat, uint64_t& out) {
  std::istringstream in(cpu_stat);
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "usage_usec") {
      out = value;
      return true;
    }
  }
  return false;
}

struct Ranked {
  std::string path;
  uint64_t cpu;
};

}  // namespace

std::string cgroup2_mount(const std::string& mounts_file) {
  std::ifstream in(mounts_file);
  std::string device, dir, type, rest;
  while (in >> device >> dir >> type && std::getline(in, rest)) {
    if (type == "cgroup2") return dir;
  }
  return {};
}

std::map<std::string, uint64_t> read_cgroup_cpu(const std::string& root) {
  if (root.empty()) return {};
  std::map<std::string, uint64_t> out;
  std::error_code ec;
  auto options = fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it(root, options, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    std::string procs = read_file(it->path() / "cgroup.procs");
    if (procs.find_first_not_of(" \n") == std::string::npos) continue;
    uint64_t usage = 0;
    if (usage_usec(read_file(it->path() / "cpu.stat"), usage)) out[it->path().string()] = usage;
  }
  return out;
}

bool is_docker_cgroup(const std::string& path) {
  static const std::regex docker(R"((docker-[0-9a-f]{64}\.scope|docker/[0-9a-f]{64})$)");
  return std::regex_search(path, docker);
}

std::vector<std::string> busiest_cgroups(const std::map<std::string, uint64_t>& before,
                                         const std::map<std::string, uint64_t>& after,
                                         size_t max_cgroups, size_t max_docker) {
  std::vector<Ranked> docker, other;
  for (const auto& [path, usage] : after) {
    auto it = before.find(path);
    uint64_t was = it == before.end() ? 0 : it->second;
    if (usage <= was) continue;
    bool container = max_docker > 0 && is_docker_cgroup(path);
    (container ? docker : other).push_back({path, usage - was});
  }
  auto busiest_first = [](const Ranked& a, const Ranked& b) {
    return a.cpu != b.cpu ? a.cpu > b.cpu : a.path < b.path;
  };
  std::sort(docker.begin(), docker.end(), busiest_first);
  std::sort(other.begin(), other.end(), busiest_first);
  std::vector<std::string> out;
  for (size_t i = 0; i < docker.size() && i < max_docker && out.size() < max_cgroups; ++i)
    out.push_back(docker[i].path);
  for (size_t i = 0; i < other.size() && out.size() < max_cgroups; ++i)
    out.push_back(other[i].path);
  return out;
}

std::vector<std::string> CgroupRanking::top(size_t max_cgroups, size_t max_docker) {
  if (!have_last_) {
    last_ = read_cgroup_cpu(root_);
    have_last_ = true;
    std::this_thread::sleep_for(first_window_);
  }
  auto now = read_cgroup_cpu(root_);
  auto out = busiest_cgroups(last_, now, max_cgroups, max_docker);
  last_ = std::move(now);
  std::vector<std::string> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  changed_ = sorted != chosen_;
  chosen_ = std::move(sorted);
  return out;
}

}  // namespace gp::profile
