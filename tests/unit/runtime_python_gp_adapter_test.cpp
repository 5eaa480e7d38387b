// The gp-python adapter (gp's own CPython sampler) on live targets: a busy multi-threaded
// Python 3.11 script, a process that exits mid-session, and a process that is not Python.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>

#include "gp/runtime/adapters.h"
#include "runtime_python_target.h"

namespace gp::runtime {
namespace {

Target target_of(pid_t pid) {
  Target t;
  t.pid = pid;
  t.runtime = Runtime::python;
  return t;
}

SessionParams params_for(std::chrono::milliseconds duration, int hz = 50) {
  SessionParams p;
  p.duration = duration;
  p.frequency_hz = hz;
  return p;
}

TEST(RuntimePythonGpAdapter, SamplesGilHoldersWithPySpyStyleFrames) {
  test::PythonTarget target;
  ASSERT_TRUE(target.wait_ready());
  auto adapter = make_gp_python_adapter();
  EXPECT_EQ(adapter->name(), "gp-python");
  EXPECT_EQ(adapter->unavailable_reason(), "");
  Profile p = adapter->profile(target_of(target.pid()), params_for(std::chrono::seconds(3)), {});
  EXPECT_EQ(p.error_frame, "");
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
  EXPECT_EQ(p.app_metadata_json, "{\"python_version\": \"Python 3.11.2\"}");
  ASSERT_FALSE(p.stacks.empty());
  std::set<std::string> leaves;
  uint64_t total = 0;
  for (const auto& s : p.stacks) {
    ASSERT_FALSE(s.frames.empty());
    // The main thread holds the GIL only while it writes its snapshot file for the test (a
    // sample may catch that moment under load); every other stack is a busy worker's.
    if (s.frames.back().name == "write_snapshot" && s.frames.front().name == "<module>") continue;
    EXPECT_NE(s.tid, 0);
    for (const auto& f : s.frames) {
      EXPECT_EQ(f.kind, model::FrameKind::python);
      EXPECT_FALSE(f.file.empty());
      EXPECT_GT(f.start_line, 0u);
    }
    EXPECT_EQ(s.frames.front().name, "Thread._bootstrap");  // root first
    leaves.insert(s.frames.back().name);
    total += s.count;
    if (s.frames.back().name == "call_c") {
      EXPECT_EQ(s.frames.back().file,
                std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/python/target.py");
    }
  }
  // The four busy threads take turns on the GIL; the main thread sleeps without it (py-spy
  // --gil, as gProfiler runs it, leaves such threads out).
  EXPECT_EQ(leaves, (std::set<std::string>{"spin_inner", "recurse", "numbers", "call_c"}));
  EXPECT_GE(total, 10u);   // 3 s at 50 Hz is 150 ticks; a busy machine may delay some
  EXPECT_LE(total, 151u);  // never more than one GIL holder per tick
}

TEST(RuntimePythonGpAdapter, ProcessExitingMidSessionGivesTheErrorFrame) {
  pid_t child = fork();
  if (child == 0) {
    execl("/usr/bin/python3", "python3", "-c", "import time; time.sleep(1)", nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the interpreter is up
  std::thread reaper([child] { waitpid(child, nullptr, 0); });
  Profile p =
      make_gp_python_adapter()->profile(target_of(child), params_for(std::chrono::seconds(5)), {});
  reaper.join();
  EXPECT_EQ(p.error_frame, "[Profiling error: process went down during profiling]");
  EXPECT_TRUE(p.stacks.empty());
}

TEST(RuntimePythonGpAdapter, NonPythonProcessIsSkipped) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Profile p =
      make_gp_python_adapter()->profile(target_of(child), params_for(std::chrono::seconds(1)), {});
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  // No interpreter file name among its mappings: its own executable is looked into (an
  // interpreter under another name, --python-pyspy-process), which has no CPython.
  EXPECT_EQ(p.error_frame.rfind("[Profiling skipped: ", 0), 0u) << p.error_frame;
  EXPECT_NE(p.error_frame.find("sleep' has no _PyRuntime symbol"), std::string::npos)
      << p.error_frame;
}

TEST(RuntimePythonGpAdapter, StopsEarlyWhenAsked) {
  test::PythonTarget target;
  ASSERT_TRUE(target.wait_ready());
  std::stop_source stop;
  auto started = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop.request_stop();
  });
  Profile p = make_gp_python_adapter()->profile(
      target_of(target.pid()), params_for(std::chrono::seconds(60)), stop.get_token());
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(p.error_frame, "");
  EXPECT_EQ(kill(target.pid(), 0), 0) << "the target must keep running";
}

}  // namespace
}  // namespace gp::runtime
