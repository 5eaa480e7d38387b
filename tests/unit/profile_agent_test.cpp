// The agent's metadata and metrics in gProfiler's shapes (distro, /proc/cpuinfo, psutil).
#include "gp/profile/agent.h"

#include <gtest/gtest.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <fstream>
#include <sstream>

namespace gp::test::profile_agent {
namespace {

using namespace gp::profile;

TEST(ProfileAgent, OsReleaseGivesNameVersionAndCodename) {
  auto debian = parse_os_release(
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"
      "VERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n");
  EXPECT_EQ(debian.name, "Debian GNU/Linux");
  EXPECT_EQ(debian.version, "12");
  EXPECT_EQ(debian.codename, "bookworm");
  // Without VERSION_CODENAME, the word in parentheses of VERSION (distro does the same).
  auto old = parse_os_release(
      "NAME=\"Ubuntu\"\nVERSION=\"20.04.6 LTS (Focal Fossa)\"\nVERSION_ID=\"20.04\"\n");
  EXPECT_EQ(old.codename, "Focal Fossa");
  auto none = parse_os_release("");
  EXPECT_EQ(none.name, "unknown");
  EXPECT_EQ(none.codename, "unknown");
}

TEST(ProfileAgent, CpuinfoGivesTheFirstModelFlagsAndIntelPlatform) {
  std::string text =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme hypervisor avx\n\n"
      "processor\t: 1\nmodel name\t: other\nflags\t\t: fpu\n";
  auto c = parse_cpuinfo(text);
  EXPECT_EQ(c.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(c.flags, "fpu vme hypervisor avx");
  EXPECT_EQ(c.arch_codename, "SPR");
  EXPECT_TRUE(c.hypervisor_flag);
  auto arm =
      parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\n");
  EXPECT_EQ(arm.model_name, "unknown");
  EXPECT_EQ(arm.flags, "fp asimd evtstrm");
  EXPECT_EQ(arm.arch_codename, "UNKNOWN");
  EXPECT_FALSE(arm.hypervisor_flag);
}

TEST(ProfileAgent, LddVersionPatterns) {
  EXPECT_EQ(parse_ldd_version("ldd (Debian GLIBC 2.36-9+deb12u4) 2.36\nCopyright ...\n"),
            (std::pair<std::string, std::string>{"glibc", "2.36-9+deb12u4"}));
  EXPECT_EQ(parse_ldd_version("ldd (GNU libc) 2.17\n"),
            (std::pair<std::string, std::string>{"glibc", "2.17"}));
  EXPECT_EQ(parse_ldd_version("musl libc (x86_64)\nVersion 1.2.4\nDynamic Program Loader\n"),
            (std::pair<std::string, std::string>{"musl", "1.2.4"}));
  EXPECT_EQ(parse_ldd_version("ldd not found").first, "unknown");
}

TEST(ProfileAgent, CpuPercentIsPsutilsBusyShare) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  auto a = parse_proc_stat("cpu  100 0 50 800 50 0 0 0 30 0\ncpu0 1 2 3\n");
  auto b = parse_proc_stat("cpu  160 0 70 1100 70 0 0 0 40 0\n");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->total, 1000u);  // guest is already in user
  EXPECT_EQ(a->busy, 150u);
  // busy 80 of 400 ticks.
  EXPECT_DOUBLE_EQ(cpu_percent(*a, *b), 20.0);
  EXPECT_DOUBLE_EQ(cpu_percent(*b, *a), 0.0);
  EXPECT_FALSE(parse_proc_stat("intr 1 2 3\n"));
}

TEST(ProfileAgent, MemoryPercentUsesMemAvailable) {
  auto m =
      memory_percent("MemTotal:       16000000 kB\nMemFree:  1 kB\nMemAvailable:   12000000 kB\n");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(*m, 25.0);
  EXPECT_FALSE(memory_percent("MemTotal: 5 kB\n"));
}

TEST(ProfileAgent, MetricsMonitorMeasuresThisHost) {
  MetricsMonitor monitor(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  auto m = monitor.take();
  ASSERT_TRUE(m.cpu_avg && m.mem_avg);
  EXPECT_GE(*m.cpu_avg, 0.0);
  EXPECT_LE(*m.cpu_avg, 100.0);
  EXPECT_GT(*m.mem_avg, 0.0);
  EXPECT_LT(*m.mem_avg, 100.0);
  // take() starts a new period: the memory samples were consumed.
  auto again = monitor.take();
  (void)again;
}

TEST(ProfileAgent, StaticMetadataHasTheStudiosFieldsAndNoToken) {
  json::Value args = json::Value::object();
  args.set("server_token", json::Value::from_string("s3cret"));
  args.set("duration", json::Value::from_int(60));
  json::Value md = static_metadata(1700000000, args);
  for (const char* key : {"cloud_provider", "agent_version", "spawn_time", "hypervisor",
                          "processors", "cpu_model_name", "memory_capacity_mb", "hostname",
                          "os_name", "os_release", "os_codename", "libc_type", "libc_version",
                          "mac_address", "private_ip", "spawn_uptime_ms", "run_arguments", "pid"})
    EXPECT_NE(md.find(key), nullptr) << key;
  EXPECT_EQ(md.get_string("spawn_time"), "2023-11-14T22:13:20");
  EXPECT_EQ(json::dump(md).find("s3cret"), std::string::npos);
  EXPECT_EQ(md.find("pid")->text, std::to_string(::getpid()));
#ifdef __GLIBC__
  // From this host's own `ldd --version`, run through the spawner.
  EXPECT_EQ(md.get_string("libc_type"), "glibc");
  EXPECT_TRUE(md.get_string("libc_version").starts_with(::gnu_get_libc_version()))
      << md.get_string("libc_version");
#endif
}

TEST(ProfileAgent, HeaderGetsTheAgentMetadataAndMetricsStacksUntouched) {
  std::string path = ::testing::TempDir() + "/agent_header." + std::to_string(::getpid()) + ".col";
  std::ofstream(path)
      << "# {\"containers\": [], \"metadata\": {\"hostname\": \"h\", "
         "\"os_name\": \"unknown\", \"sampling_event\": \"cpu-time\"}, "
         "\"metrics\": {\"cpu_avg\": null, \"mem_avg\": null}}\n0;;sh;a b 3\n0;;sh;c 1";
  json::Value agent = json::Value::object();
  agent.set("os_name", json::Value::from_string("Debian GNU/Linux"));
  agent.set("spawn_time", json::Value::from_string("2026-01-01T00:00:00"));
  ASSERT_TRUE(apply_agent_header(path, agent, "2026-01-01T00:01:00", {12.5, 40.0}).ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  EXPECT_EQ(text.substr(text.find('\n')), "\n0;;sh;a b 3\n0;;sh;c 1");
  auto header = json::parse(text.substr(2, text.find('\n') - 2));
  ASSERT_TRUE(header);
  const json::Value* md = header->find("metadata");
  EXPECT_EQ(md->get_string("os_name"), "Debian GNU/Linux");
  EXPECT_EQ(md->get_string("hostname"), "h");  // gp-fold's values stay unless replaced
  EXPECT_EQ(md->get_string("sampling_event"), "cpu-time");
  EXPECT_EQ(md->get_string("current_time"), "2026-01-01T00:01:00");
  EXPECT_EQ(header->find("metrics")->find("cpu_avg")->as_double(), 12.5);
  EXPECT_EQ(header->find("metrics")->find("mem_avg")->as_double(), 40.0);
}

}  // namespace
}  // namespace gp::test::profile_agent
