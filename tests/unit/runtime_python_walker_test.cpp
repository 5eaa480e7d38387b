// gp's CPython sampler against a live interpreter: the stacks FrameWalker reads from process
// memory must equal what the target's own sys._current_frames() reports, per thread (names,
// file paths, first lines), including a 50-deep recursion and a running generator.
// Interpreters: /usr/bin/python3 (Debian's 3.11), plus any listed in GP_TEST_EXTRA_PYTHONS
// (colon-separated paths, e.g. other CPython versions when the machine has them).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "runtime/python/python_sampler.h"
#include "runtime_python_target.h"

namespace gp::runtime::python {
namespace {

std::vector<std::string> interpreters() {
  std::vector<std::string> out = {"/usr/bin/python3"};
  if (const char* extra = std::getenv("GP_TEST_EXTRA_PYTHONS")) {
    std::stringstream ss(extra);
    for (std::string p; std::getline(ss, p, ':');) {
      if (!p.empty()) out.push_back(p);
    }
  }
  return out;
}

std::string describe(const std::vector<PyFrameInfo>& frames) {
  std::string s;
  for (const auto& f : frames)
    s += f.name + " (" + f.file + ":" + std::to_string(f.first_line) + ")\n";
  return s;
}

std::string describe(const std::vector<test::SnapshotFrame>& frames) {
  std::string s;
  for (const auto& f : frames)
    s += f.name + " (" + f.file + ":" + std::to_string(f.first_line) + ")\n";
  return s;
}

struct Sampled {
  InterpreterInfo info;
  std::vector<ThreadSample> threads;
};

// Attaches gp's sampler and takes one untorn snapshot (retrying torn ones).
Sampled sample_target(pid_t pid) {
  Sampled out;
  auto attached = PythonSampler::attach(pid);
  if (auto* failure = std::get_if<AttachFailure>(&attached)) {
    ADD_FAILURE() << failure->reason;
    return out;
  }
  auto& sampler = *std::get<std::unique_ptr<PythonSampler>>(attached);
  out.info = sampler.interpreter();
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (sampler.sample(out.threads, 10) == WalkStatus::ok) return out;
  }
  ADD_FAILURE() << "every snapshot was torn";
  return out;
}

TEST(RuntimePythonWalker, StacksMatchTheTargetsOwnCurrentFrames) {
  for (const auto& python : interpreters()) {
    SCOPED_TRACE(python);
    test::PythonTarget target(python);
    ASSERT_TRUE(target.wait_ready()) << "target did not start";
    auto expected = target.snapshot();
    ASSERT_EQ(expected.size(), 5u);
    Sampled got = sample_target(target.pid());
    ASSERT_TRUE(got.info.version_known);
    for (const auto& want : expected) {
      if (want.name == "MainThread") continue;  // it was inside write_snapshot then
      SCOPED_TRACE(want.name);
      const ThreadSample* thread = nullptr;
      for (const auto& t : got.threads) {
        if (t.native_tid == want.tid) thread = &t;
      }
      ASSERT_NE(thread, nullptr) << "no sampled thread with tid " << want.tid;
      EXPECT_EQ(describe(thread->frames), describe(want.frames));
    }
  }
}

// The target signals readiness from inside write_snapshot, a moment before its main thread
// enters idle_wait: sample again (briefly) until it is there.
Sampled sample_with_main_idle(pid_t pid) {
  Sampled got;
  for (int attempt = 0; attempt < 100; ++attempt) {
    got = sample_target(pid);
    for (const auto& t : got.threads)
      if (t.native_tid == pid && !t.frames.empty() && t.frames.back().name == "idle_wait")
        return got;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return got;
}

TEST(RuntimePythonWalker, SeesRecursionDepthGeneratorAndIdleMainThread) {
  test::PythonTarget target;
  ASSERT_TRUE(target.wait_ready());
  Sampled got = sample_with_main_idle(target.pid());
  EXPECT_EQ(got.info.version.major, 3);
  EXPECT_EQ(got.info.version.minor, 11);
  ASSERT_EQ(got.threads.size(), 5u);
  bool saw_recursion = false, saw_generator = false, saw_main = false;
  for (const auto& t : got.threads) {
    size_t recursion = 0;
    for (const auto& f : t.frames) recursion += f.name == "recurse";
    if (recursion > 0) {
      EXPECT_EQ(recursion, 51u);  // recurse(50) .. recurse(0)
      saw_recursion = true;
    }
    if (t.frames.size() >= 2 && t.frames.back().name == "numbers") {
      EXPECT_EQ(t.frames[t.frames.size() - 2].name, "consume");
      saw_generator = true;
    }
    if (t.native_tid == target.pid()) {
      ASSERT_EQ(t.frames.size(), 3u) << describe(t.frames);
      EXPECT_EQ(t.frames[0].name, "<module>");
      EXPECT_EQ(t.frames[1].name, "main");
      EXPECT_EQ(t.frames[2].name, "idle_wait");
      // The current line is the time.sleep call inside idle_wait's loop.
      EXPECT_EQ(t.frames[2].line, t.frames[2].first_line + 2);
      EXPECT_FALSE(t.holds_gil);  // it sleeps with the GIL released
      saw_main = true;
    }
  }
  EXPECT_TRUE(saw_recursion);
  EXPECT_TRUE(saw_generator);
  EXPECT_TRUE(saw_main);
}

}  // namespace
}  // namespace gp::runtime::python
