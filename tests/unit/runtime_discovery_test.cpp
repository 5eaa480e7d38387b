// Discovery: classification rules, and real Python/Node/Ruby/Java processes found through /proc.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "gp/runtime/discovery.h"
#include "runtime_core_support.h"

namespace gp::runtime {
namespace {

using test::DetachedProcess;
using test::system_python;

const std::set<Runtime> kAll = {Runtime::java, Runtime::python, Runtime::ruby,
                                Runtime::php,  Runtime::dotnet, Runtime::node};

DiscoveryOptions all_runtimes_options() {
  DiscoveryOptions o;
  o.runtimes = kAll;
  return o;
}

std::optional<Target> inspect(pid_t pid, const DiscoveryOptions& o = all_runtimes_options()) {
  auto r = inspect_process(pid, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : std::nullopt;
}

bool contains(const std::vector<Target>& ts, pid_t pid) {
  return std::any_of(ts.begin(), ts.end(), [pid](const Target& t) { return t.pid == pid; });
}

TEST(RuntimeDiscovery, ClassifiesByExeAndLibraries) {
  std::vector<std::string> libs;
  EXPECT_EQ(classify_process("/usr/bin/java", {"/usr/lib/jvm/x/lib/server/libjvm.so"}, &libs),
            Runtime::java);
  EXPECT_EQ(libs, std::vector<std::string>{"/usr/lib/jvm/x/lib/server/libjvm.so"});
  EXPECT_EQ(classify_process("/usr/bin/python3.11", {}), Runtime::python);
  EXPECT_EQ(classify_process("/usr/local/bin/python", {}), Runtime::python);
  EXPECT_EQ(classify_process("/usr/bin/uwsgi", {"/usr/lib/libpython3.11.so.1.0"}), Runtime::python);
  EXPECT_EQ(classify_process("/usr/bin/python3-config", {}), std::nullopt);
  EXPECT_EQ(classify_process("/usr/bin/node", {}), Runtime::node);
  EXPECT_EQ(classify_process("/opt/app/server", {"/opt/node/lib/libnode.so.108"}), Runtime::node);
  EXPECT_EQ(classify_process("/usr/bin/ruby3.1", {}), Runtime::ruby);
  EXPECT_EQ(classify_process("/usr/bin/x", {"/usr/lib/libruby-3.1.so.3.1"}), Runtime::ruby);
  EXPECT_EQ(classify_process("/usr/sbin/php-fpm8.2", {}), Runtime::php);
  EXPECT_EQ(classify_process("/usr/sbin/apache2", {"/usr/lib/apache2/modules/libphp8.2.so"}),
            Runtime::php);
  EXPECT_EQ(
      classify_process("/usr/share/dotnet/dotnet", {"/usr/share/dotnet/shared/libcoreclr.so"}),
      Runtime::dotnet);
  // A JVM that embeds Python is a Java process.
  EXPECT_EQ(classify_process("/usr/bin/java", {"/usr/lib/libpython3.11.so", "/x/libjvm.so"}),
            Runtime::java);
  EXPECT_EQ(classify_process("/usr/bin/bash", {"/usr/lib/x86_64-linux-gnu/libc.so.6"}),
            std::nullopt);
  EXPECT_EQ(classify_process("/usr/bin/python3.11 (deleted)", {}), Runtime::python);
}

TEST(RuntimeDiscovery, FindsARealPythonProcess) {
  DetachedProcess py({system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_GT(py.pid(), 0);
  ASSERT_TRUE(py.wait_for_map("python3"));
  auto t = inspect(py.pid());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->runtime, Runtime::python);
  EXPECT_EQ(t->comm, "python3");
  EXPECT_EQ(t->exe, "/usr/bin/python3.11");
  ASSERT_EQ(t->cmdline.size(), 3u);
  EXPECT_EQ(t->cmdline[1], "-c");
  EXPECT_EQ(t->root, "/proc/" + std::to_string(py.pid()) + "/root");
}

TEST(RuntimeDiscovery, FindsNodeAndRuby) {
  DetachedProcess node({"node", "-e", "setTimeout(() => {}, 60000)"});
  DetachedProcess ruby({"ruby", "-e", "sleep 60"});
  ASSERT_TRUE(ruby.wait_for_map("libruby"));
  ASSERT_TRUE(node.wait_for_map("/node"));
  auto n = inspect(node.pid());
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->runtime, Runtime::node);
  auto r = inspect(ruby.pid());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->runtime, Runtime::ruby);
  ASSERT_FALSE(r->libraries.empty());
  EXPECT_NE(r->libraries[0].find("libruby"), std::string::npos);
}

TEST(RuntimeDiscovery, FindsAJvmByLibjvm) {
  char dir[] = "/tmp/gp-jvm-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::ofstream(std::string(dir) + "/Sleep.java")
      << "public class Sleep { public static void main(String[] a) throws Exception {"
         " Thread.sleep(120000); } }\n";
  DetachedProcess java({"java", "-Xshare:auto", "-Xmx64m", std::string(dir) + "/Sleep.java"});
  ASSERT_TRUE(java.wait_for_map("libjvm.so", std::chrono::seconds(120)));
  auto t = inspect(java.pid());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->runtime, Runtime::java);
  ASSERT_EQ(t->libraries.size(), 1u);
  EXPECT_NE(t->libraries[0].find("/libjvm.so"), std::string::npos);
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

TEST(RuntimeDiscovery, OnlyWantedRuntimes) {
  DetachedProcess py({system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(py.wait_for_map("python3"));
  DiscoveryOptions java_only;
  java_only.runtimes = {Runtime::java};
  EXPECT_FALSE(inspect(py.pid(), java_only).has_value());
}

TEST(RuntimeDiscovery, GoneAndNonRuntimePidsAreRejectedWithAReason) {
  DetachedProcess sleeper({"sleep", "60"});
  ASSERT_TRUE(sleeper.wait_for_map("sleep"));
  pid_t gone = 0;
  {
    DetachedProcess brief({"true"});
    gone = brief.pid();
  }
  // Wait until the short-lived one is gone (it may linger as a zombie: that counts as gone).
  for (int i = 0; i < 200; ++i) {
    auto st = read_stat(gone);
    if (!st || st->state == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ProcessWatcher w(all_runtimes_options(), {sleeper.pid(), gone});
  EXPECT_TRUE(w.scan().empty());
  ASSERT_EQ(w.rejected().size(), 2u);
  EXPECT_EQ(w.rejected()[0].pid, sleeper.pid());
  EXPECT_EQ(w.rejected()[0].reason,
            "not a Java, Python, Ruby, PHP, .NET, Node process (comm 'sleep')");
  EXPECT_EQ(w.rejected()[1].pid, gone);
  EXPECT_TRUE(w.scan().empty()) << "--pids are looked at once";
}

TEST(RuntimeDiscovery, WatcherReportsNewProcessesOnce) {
  DetachedProcess first({system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(first.wait_for_map("python3"));
  ProcessWatcher w(all_runtimes_options());
  auto initial = w.scan();
  EXPECT_TRUE(contains(initial, first.pid()));
  DetachedProcess second({system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(second.wait_for_map("python3"));
  auto later = w.scan();
  EXPECT_TRUE(contains(later, second.pid()));
  EXPECT_FALSE(contains(later, first.pid()));
  EXPECT_FALSE(contains(w.scan(), second.pid()));
}

TEST(RuntimeDiscovery, OwnDescendantsAreNeverTargets) {
  // A shell that starts python: with the shell as "gp", its python child is gp's own.
  DetachedProcess shell(
      {"sh", "-c", std::string(system_python()) + " -c 'import time; time.sleep(60)'; :"});
  ASSERT_GT(shell.pid(), 0);
  pid_t python = 0;
  for (int i = 0; i < 500 && python == 0; ++i) {
    std::ifstream children("/proc/" + std::to_string(shell.pid()) + "/task/" +
                           std::to_string(shell.pid()) + "/children");
    children >> python;
    if (python == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GT(python, 0);
  DiscoveryOptions o = all_runtimes_options();
  o.self = shell.pid();
  ProcessWatcher system_wide(o);
  EXPECT_FALSE(contains(system_wide.scan(), python));
  ProcessWatcher by_pid(o, {python});
  EXPECT_TRUE(by_pid.scan().empty());
  ASSERT_EQ(by_pid.rejected().size(), 1u);
  EXPECT_EQ(by_pid.rejected()[0].reason, "is gp-runtime itself or a profiler it started");
  ::kill(python, SIGKILL);
}

TEST(RuntimeDiscovery, ProcessesAnotherGpInstanceStartedAreNeverTargets) {
  // Another gp-runtime's helper: not our descendant, but marked in its environment.
  DetachedProcess helper({"env", std::string(kSpawnedEnv) + "=gp-runtime 4242", system_python(),
                          "-c", "import time; time.sleep(60)"});
  DetachedProcess app({system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_GT(helper.pid(), 0);
  ASSERT_GT(app.pid(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both exec'd python
  ProcessWatcher system_wide(all_runtimes_options());
  auto found = system_wide.scan();
  EXPECT_FALSE(contains(found, helper.pid()));
  EXPECT_TRUE(contains(found, app.pid()));
  ProcessWatcher by_pid(all_runtimes_options(), {helper.pid()});
  EXPECT_TRUE(by_pid.scan().empty());
  ASSERT_EQ(by_pid.rejected().size(), 1u);
  EXPECT_EQ(by_pid.rejected()[0].reason, "is gp's own helper: started by gp-runtime 4242");
}

TEST(RuntimeDiscovery, JdkToolLaunchersAreNoApplications) {
  // .../bin/jcmd next to .../bin/java: a tool that loads libjvm.so, not an application.
  char dir[] = "/tmp/gp-jdk-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string bin = std::string(dir) + "/bin";
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  std::ofstream(bin + "/java") << "#!/bin/sh\n";
  ASSERT_EQ(::chmod((bin + "/java").c_str(), 0755), 0);
  EXPECT_EQ(own_helper_reason(::getpid(), bin + "/jcmd"), "a JDK tool (jcmd), not an application");
  EXPECT_EQ(own_helper_reason(::getpid(), bin + "/java"), "");
  EXPECT_EQ(own_helper_reason(::getpid(), "/opt/app/bin/server"), "");
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

TEST(RuntimeDiscovery, StatOfThisProcess) {
  auto st = read_stat(::getpid());
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->ppid, ::getppid());
  EXPECT_FALSE(st->kernel_thread);
  EXPECT_GT(st->start_ticks, 0u);
  EXPECT_FALSE(read_cmdline(::getpid()).empty());
}

TEST(RuntimeDiscovery, StatSaysWhenAProcessIsInItsExit) {
  char dir[] = "/tmp/gp-proc-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  ASSERT_EQ(::mkdir((std::string(dir) + "/4321").c_str(), 0755), 0);
  auto write_stat = [&](const char* flags) {
    std::ofstream(std::string(dir) + "/4321/stat") << "4321 (python3) R 1 4321 4321 0 -1 " << flags
                                                   << " 0 0 0 0 5 6 0 0 20 0 1 0 777 1000 100\n";
  };
  write_stat("4194304");  // PF_RANDOMIZE only: running
  auto st = read_stat(4321, dir);
  ASSERT_TRUE(st.has_value());
  EXPECT_FALSE(st->exiting);
  EXPECT_EQ(st->start_ticks, 777u);
  write_stat("4194308");  // and PF_EXITING: in do_exit, its state still R
  st = read_stat(4321, dir);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(st->exiting);
  EXPECT_EQ(st->state, 'R');
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

TEST(RuntimeDiscovery, PhpProcFilterMatchesTheCommAsPgrepDoes) {
  // gProfiler's default selects php-fpm workers and masters, not the CLI.
  EXPECT_TRUE(php_proc_filter_matches("php-fpm", "php-fpm8.2"));
  EXPECT_FALSE(php_proc_filter_matches("php-fpm", "php8.2"));
  // Anywhere in the comm, unless anchored.
  EXPECT_TRUE(php_proc_filter_matches("php", "php-fpm8.2"));
  EXPECT_TRUE(php_proc_filter_matches("^php[0-9.]*$", "php8.2"));
  EXPECT_FALSE(php_proc_filter_matches("^php[0-9.]*$", "php-fpm8.2"));
  EXPECT_TRUE(php_proc_filter_matches("", "anything"));
  EXPECT_TRUE(check_php_proc_filter("php-(fpm|cgi)").ok());
  auto bad = check_php_proc_filter("(");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("invalid --php-proc-filter '(': ", 0), 0u);
}

}  // namespace
}  // namespace gp::runtime
