// gp-profile --perf-use-cgroups: which cgroups gp-record samples.
#include "gp/profile/top_cgroups.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gp::profile {
namespace {

namespace fs = std::filesystem;

using Usage = std::map<std::string, uint64_t>;
using Paths = std::vector<std::string>;

const std::string kContainer =
    "/sys/fs/cgroup/system.slice/docker-" + std::string(64, 'a') + ".scope";

TEST(TopCgroups, BusiestSinceThePreviousReadingFirst) {
  Usage before{{"/a", 1000}, {"/b", 50}, {"/c", 900}, {"/idle", 5000}};
  Usage after{{"/a", 1100}, {"/b", 950}, {"/c", 1400}, {"/idle", 5000}, {"/new", 300}};
  // CPU in between: a 100, b 900, c 500, new 300; idle used none (left out).
  EXPECT_EQ(busiest_cgroups(before, after, 2, 0), (Paths{"/b", "/c"}));
  EXPECT_EQ(busiest_cgroups(before, after, 10, 0), (Paths{"/b", "/c", "/new", "/a"}));
}

TEST(TopCgroups, DockerContainersFirstThenOthersUpToTheLimit) {
  std::string other_container = "/sys/fs/cgroup/docker/" + std::string(64, 'b');
  Usage after{{kContainer, 10}, {other_container, 20}, {"/busy", 1000}, {"/less", 500}};
  EXPECT_EQ(busiest_cgroups({}, after, 2, 1), (Paths{other_container, "/busy"}));
  // Without the option, containers rank among the others.
  EXPECT_EQ(busiest_cgroups({}, after, 2, 0), (Paths{"/busy", "/less"}));
  EXPECT_TRUE(is_docker_cgroup(kContainer));
  EXPECT_FALSE(is_docker_cgroup("/sys/fs/cgroup/system.slice/docker.service"));
}

TEST(TopCgroups, ReadsCgroupsThatHoldProcesses) {
  fs::path root = fs::temp_directory_path() / ("gp-cgroups-" + std::to_string(getpid()));
  fs::create_directories(root / "parent" / "leaf");
  fs::create_directories(root / "empty");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(root / "cgroup.procs", "1\n");
  write(root / "cpu.stat", "usage_usec 99999\n");
  write(root / "parent" / "cgroup.procs", "");
  write(root / "parent" / "cpu.stat", "usage_usec 700\n");
  write(root / "parent" / "leaf" / "cgroup.procs", "42\n43\n");
  write(root / "parent" / "leaf" / "cpu.stat", "usage_usec 700\nuser_usec 600\n");
  write(root / "empty" / "cgroup.procs", "");
  write(root / "empty" / "cpu.stat", "usage_usec 5\n");
  auto usage = read_cgroup_cpu(root.string());
  EXPECT_EQ(usage, (Usage{{(root / "parent" / "leaf").string(), 700}}));
  fs::remove_all(root);
}

}  // namespace
}  // namespace gp::profile
