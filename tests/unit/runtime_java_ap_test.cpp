// The async-profiler adapter with an `asprof` on PATH. async-profiler is not packaged by
// Debian, so the asprof here is a stand-in script that accepts only the exact command lines
// of async-profiler's documented CLI (docs/ProfilerOptions.md) that gp must send, and answers
// `stop` by writing documented collapsed output (tests/fixtures/runtime/java/) to the `-f`
// file, as the agent inside the JVM would. The target is a real JVM, as the adapter requires.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gp/runtime/adapters.h"
#include "runtime_java_fixture.h"

namespace gp::test::runtime_java {
namespace {

using gp::model::FrameKind;
using namespace std::chrono_literals;
namespace rt = gp::runtime;

const char* kFakeAsprof = R"SH(#!/bin/bash
# Stand-in for async-profiler's asprof: only gp's documented command lines are accepted.
pid=@PID@
echo "$*" >> "@LOG@"
file_re="(/tmp/gp-ap-$pid-r[0-9]+\.[0-9]+-[0-9a-f]{16}/collapsed\.txt)"  # the run (pid.start) that made it, then random
start_re="^start -e cpu -i 20000000 -a -g -t -o collapsed -f $file_re --timeout 34 -F vtable $pid\$"
# gProfiler's options given: --java-async-profiler-mode itimer, -features vtable,comptask, -args.
custom_re="^start -e itimer -i 20000000 -a -g -t -o collapsed -f $file_re --timeout 34 -F vtable,comptask --cstack dwarf -j 512 $pid\$"
stop_re="^stop -a -g -t -o collapsed -f $file_re $pid\$"
if [[ "$*" =~ $start_re || "$*" =~ $custom_re ]]; then
  echo "Profiling started"
  exit 0
fi
if [[ "$*" =~ $stop_re ]]; then
  cp "@FIXTURE@" "/proc/$pid/root${BASH_REMATCH[1]}"
  exit 0
fi
echo "unexpected arguments: $*" >&2
exit 2
)SH";

class AsyncProfilerAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef GP_JAVA_CLASSES
    GTEST_SKIP() << "javac was not found at configure time";
#endif
    char tmpl[] = "/tmp/gp-ap-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::create_directory(dir_ + "/bin");
    std::filesystem::create_directory(dir_ + "/work");
    const char* path = std::getenv("PATH");
    old_path_ = path ? path : "/usr/bin:/bin";
  }
  void TearDown() override {
    setenv("PATH", old_path_.c_str(), 1);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void install_fake_asprof(pid_t pid) {
    std::string script = kFakeAsprof;
    auto replace = [&](const std::string& key, const std::string& value) {
      for (size_t at; (at = script.find(key)) != std::string::npos;)
        script.replace(at, key.size(), value);
    };
    replace("@PID@", std::to_string(pid));
    replace("@LOG@", dir_ + "/calls.log");
    replace("@FIXTURE@",
            std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/java/async_profiler_collapsed.txt");
    std::ofstream(dir_ + "/bin/asprof") << script;
    chmod((dir_ + "/bin/asprof").c_str(), 0755);
    setenv("PATH", (dir_ + "/bin:" + old_path_).c_str(), 1);
  }
  rt::Profile profile(pid_t pid, rt::AsyncProfilerOptions ap = {}) {
    rt::Target t;
    t.pid = pid;
    rt::SessionParams params;
    params.async_profiler = std::move(ap);
    params.frequency_hz = 50;
    params.duration = 4s;
    params.mode = "ap";
    params.work_dir = dir_ + "/work";
    return rt::make_async_profiler_adapter()->profile(t, params, {});
  }
  std::string calls() {
    std::ifstream in(dir_ + "/calls.log");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string dir_;
  std::string old_path_;
};

TEST_F(AsyncProfilerAdapterTest, RunsAsprofStartAndStopAndReadsItsCollapsedOutput) {
  auto jvm = JavaProgram::start({}, {});
  ASSERT_TRUE(jvm);
  install_fake_asprof(jvm->pid());
  EXPECT_EQ(rt::make_async_profiler_adapter()->unavailable_reason(), "");
  auto p = profile(jvm->pid());
  ASSERT_EQ(p.error_frame, "") << (p.warnings.empty() ? "" : p.warnings[0]) << "\n" << calls();
  std::string log = calls();
  ASSERT_EQ(std::count(log.begin(), log.end(), '\n'), 2) << log;
  EXPECT_EQ(log.rfind("start ", 0), 0u) << log;
  EXPECT_NE(log.find("\nstop "), std::string::npos) << log;
  ASSERT_EQ(p.stacks.size(), 5u);
  const auto& hot = p.stacks[0];
  EXPECT_EQ(hot.count, 21u);
  EXPECT_EQ(hot.tid, 4242);
  ASSERT_EQ(hot.frames.size(), 3u);
  EXPECT_EQ(hot.frames[1].name, "Main.work()V");
  EXPECT_EQ(hot.frames[1].kind, FrameKind::java);
  EXPECT_EQ(hot.frames[2].kind, FrameKind::inlined);
  EXPECT_TRUE(jvm->alive());
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/work"));
}

TEST_F(AsyncProfilerAdapterTest, GprofilersAsyncProfilerOptionsReachAsprof) {
  auto jvm = JavaProgram::start({}, {});
  ASSERT_TRUE(jvm);
  install_fake_asprof(jvm->pid());
  auto p =
      profile(jvm->pid(), {"itimer", {"vtable", "comptask"}, {"--cstack", "dwarf", "-j", "512"}});
  ASSERT_EQ(p.error_frame, "") << calls();
  EXPECT_EQ(calls().rfind("start -e itimer ", 0), 0u) << calls();
  EXPECT_EQ(p.stacks.size(), 5u);
}

TEST_F(AsyncProfilerAdapterTest, AnAsprofFailureIsAPerProcessError) {
  auto jvm = JavaProgram::start({}, {});
  ASSERT_TRUE(jvm);
  install_fake_asprof(jvm->pid() + 1);  // answers no command line for this pid
  auto p = profile(jvm->pid());
  EXPECT_EQ(p.error_frame.rfind("[Profiling error: asprof start: asprof exited with status 2: "
                                "unexpected arguments: start -e cpu",
                                0),
            0u)
      << p.error_frame;
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("cannot profile JVM " + std::to_string(jvm->pid())),
            std::string::npos);
}

TEST_F(AsyncProfilerAdapterTest, IsUnavailableWithoutAsprof) {
  setenv("PATH", (dir_ + "/bin").c_str(), 1);
  auto adapter = rt::make_async_profiler_adapter();
  EXPECT_EQ(adapter->unavailable_reason(),
            "async-profiler is not installed (no asprof or profiler.sh on PATH)");
}

}  // namespace
}  // namespace gp::test::runtime_java
