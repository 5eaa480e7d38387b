// gp-merge, runtime into system: the cases of gProfiler's merge_profiles (reference/gprofiler.md
// §4.1, §4.2, §2.9; tests test_merge.py and test_merge_zero_samples_fix.py), reproducible.

#include <gtest/gtest.h>

#include <cmath>

#include "gp/merge/merge.h"
#include "gp/merge/runtime.h"
#include "gp/merge/scale.h"
#include "merge_fixture.h"

namespace gp::test::merge_runtime {
namespace {

using namespace merge_fixture;
using model::SourceKind;
using Lines = std::vector<std::string>;

model::Archive run_merge(std::vector<model::Archive> in, gp::merge::MergeOptions o = {},
                         gp::merge::MergeStats* stats = nullptr) {
  auto out = gp::merge::merge_archives(std::move(in), o, stats);
  EXPECT_TRUE(out) << (out ? "" : out.error().message);
  return out ? std::move(*out) : model::Archive{};
}

// The test_merge.py case: a java process perf saw, whose runtime profiler skipped it.
model::Session java_system() {
  model::Session s = session(SourceKind::system);
  model::SessionBuilder b(s);
  b.process(process(10, "java"));
  add(b, 10, "[unknown];pthread_getname_np;do_syscall_64_[k]", 3);
  b.process(process(20, "bash"));
  add(b, 20, "main;read;ksys_read_[k]", 5);
  return s;
}

model::Session runtime_with(int32_t pid, const std::string& comm, const std::string& stack,
                            uint64_t count) {
  model::Session s = session(SourceKind::runtime);
  model::SessionBuilder b(s);
  b.process(process(pid, comm));
  add(b, pid, stack, count);
  return s;
}

TEST(MergeRuntime, SkipStackIsInsertedAfterCommOfEveryPerfStack) {
  auto out =
      run_merge({archive_of(java_system()),
                 archive_of(runtime_with(10, "java", "[Profiling skipped: profiled-oom]", 1))});
  ASSERT_EQ(out.sessions.size(), 1u);
  EXPECT_EQ(folded(out),
            (Lines{"bash;main;read;ksys_read_[k] 5",
                   "java;[Profiling skipped: profiled-oom];[unknown];pthread_getname_np;"
                   "do_syscall_64_[k] 3"}));
}

TEST(MergeRuntime, ErrorFrameFromRuntimeProcessEntry) {
  model::Session rt = session(SourceKind::runtime);
  model::Process p = process(10, "java");
  p.error_frame = "[Profiling error: process went down during profiling]";
  model::SessionBuilder(rt).process(p);
  gp::merge::MergeStats stats;
  auto out = run_merge({archive_of(java_system()), archive_of(rt)}, {}, &stats);
  EXPECT_EQ(stats.error_frames_attached, 1u);
  EXPECT_EQ(out.sessions[0].find_process(10)->error_frame, p.error_frame);
  EXPECT_EQ(total(out, 10), 3u);
}

TEST(MergeRuntime, ErrorWithNoPerfSamplesEmitsNothing) {
  gp::merge::MergeStats stats;
  auto out =
      run_merge({archive_of(java_system()),
                 archive_of(runtime_with(30, "java", "[Profiling error: exception OSError]", 1))},
                {}, &stats);
  EXPECT_EQ(total(out, 30), 0u);
  EXPECT_EQ(total(out), 8u);
  EXPECT_EQ(stats.runtime_pids_dropped, 1u);
}

TEST(MergeRuntime, ValidRuntimeWithNoPerfSamplesIsKeptUnscaled) {
  // Fix #998: P = 0 keeps the runtime stacks as they are.
  auto out = run_merge({archive_of(java_system()),
                        archive_of(runtime_with(30, "python3", "<module>_[p];work_[p]", 7))});
  EXPECT_EQ(folded(out), (Lines{"bash;main;read;ksys_read_[k] 5",
                                "java;[unknown];pthread_getname_np;do_syscall_64_[k] 3",
                                "python3;<module>_[p];work_[p] 7"}));
}

TEST(MergeRuntime, EmptyPerfKeepsRuntimeStacks) {
  model::Session empty = session(SourceKind::system);
  auto out = run_merge(
      {archive_of(empty), archive_of(runtime_with(30, "python3", "<module>_[p];work_[p]", 7))});
  EXPECT_EQ(folded(out), (Lines{"python3;<module>_[p];work_[p] 7"}));
}

TEST(MergeRuntime, RuntimeReplacesNativeStacksScaledToPerfCount) {
  model::Session sys = session(SourceKind::system);
  model::SessionBuilder b(sys);
  b.process(process(40, "python3"));
  add(b, 40, "_PyEval_EvalFrameDefault;PyObject_Call", 1000);
  model::Session rt = session(SourceKind::runtime);
  model::SessionBuilder r(rt);
  r.process(process(40, "python3"));
  add(r, 40, "main_[p];a_[p]", 13);
  add(r, 40, "main_[p];b_[p]", 11);
  add(r, 40, "main_[p];c_[p]", 7);
  gp::merge::MergeStats stats;
  auto out = run_merge({archive_of(sys), archive_of(rt)}, {}, &stats);
  EXPECT_EQ(stats.runtime_pids_replaced, 1u);
  uint64_t t = total(out, 40);
  // Each of the 3 stacks rounds by less than one sample.
  EXPECT_LE(std::llabs(static_cast<long long>(t) - 1000), 3);
  for (const std::string& line : folded(out))
    EXPECT_EQ(line.find("PyObject_Call"), std::string::npos);
  // 13/31 of 1000 = 419.35: floor or ceil.
  auto lines = folded(out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[0] == "python3;main_[p];a_[p] 419" || lines[0] == "python3;main_[p];a_[p] 420")
      << lines[0];
}

TEST(MergeRuntime, SystemStacksWithPythonFramesAreNotReplacedAgain) {
  // gp-record --python-frames=auto walked pid 40 (its stacks carry Python frames) but not pid 41
  // (a version it has no offsets for); the user-space sampler profiled both.
  model::Session sys = session(SourceKind::system);
  model::SessionBuilder b(sys);
  b.process(process(40, "python3"));
  add(b, 40, "_start;_PyEval_EvalFrameDefault;main_[p];work_[p];ext_func;read_[k]", 90);
  add(b, 40, "_start;Py_RunMain", 10);
  b.process(process(41, "python3"));
  add(b, 41, "_start;_PyEval_EvalFrameDefault", 50);
  model::Session rt = session(SourceKind::runtime);
  model::SessionBuilder r(rt);
  r.process(process(40, "python3"));
  add(r, 40, "main_[p];work_[p]", 9);
  r.process(process(41, "python3"));
  add(r, 41, "main_[p];other_[p]", 5);
  gp::merge::MergeStats stats;
  auto out = run_merge({archive_of(sys), archive_of(rt)}, {}, &stats);
  EXPECT_EQ(stats.runtime_pids_kept_native, 1u);
  EXPECT_EQ(stats.runtime_pids_replaced, 1u);
  EXPECT_EQ(folded(out),
            (Lines{"python3;_start;Py_RunMain 10",
                   "python3;_start;_PyEval_EvalFrameDefault;main_[p];work_[p];ext_func;read_[k] 90",
                   "python3;main_[p];other_[p] 50"}));
}

TEST(MergeRuntime, SameSeedSameOutputAndInputOrderDoesNotMatter) {
  model::Session sys = session(SourceKind::system);
  model::SessionBuilder b(sys);
  for (int pid = 100; pid < 110; ++pid) {
    b.process(process(pid, "python3"));
    add(b, pid, "native_" + std::to_string(pid), 50 + pid);
  }
  model::Session rt = session(SourceKind::runtime);
  model::SessionBuilder r(rt);
  for (int pid = 100; pid < 110; ++pid)
    for (int k = 0; k < 5; ++k) add(r, pid, "main_[p];f" + std::to_string(k) + "_[p]", 3 + k);
  auto a = folded(run_merge({archive_of(sys), archive_of(rt)}));
  auto b2 = folded(run_merge({archive_of(rt), archive_of(sys)}));
  EXPECT_EQ(a, b2);
  EXPECT_EQ(a, folded(run_merge({archive_of(sys), archive_of(rt)})));
  // Another seed rounds differently somewhere (35 stacks with fractional scaled counts).
  auto c = folded(run_merge({archive_of(sys), archive_of(rt)}, {.seed = 12345}));
  EXPECT_NE(a, c);
}

TEST(MergeRuntime, ContainerCarriedOverAppidFromRuntime) {
  model::Session sys = session(SourceKind::system);
  model::SessionBuilder b(sys);
  model::Process sp = process(50, "python3");
  sp.container_name = "web";
  b.process(sp);
  add(b, 50, "native", 10);
  model::Session rt = session(SourceKind::runtime);
  model::SessionBuilder r(rt);
  model::Process rp = process(50, "python3");
  rp.appid = "python: app.py (/srv/app.py)";
  rp.app_metadata_json = R"({"python_version": "Python 3.11.2"})";
  r.process(rp);
  add(r, 50, "main_[p]", 10);
  auto out = run_merge({archive_of(sys), archive_of(rt)});
  const model::Process* p = out.sessions[0].find_process(50);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->container_name, "web");
  EXPECT_EQ(p->appid, rp.appid);
  EXPECT_EQ(p->app_metadata_json, rp.app_metadata_json);
  EXPECT_EQ(folded(out), (Lines{"python3;main_[p] 10"}));
}

TEST(MergeRuntime, PerfLessConcatenatesUnscaled) {
  model::Session sys = session(SourceKind::system);
  model::SessionBuilder b(sys);
  b.process(process(40, "python3"));
  add(b, 40, "native", 1000);
  auto out = run_merge({archive_of(sys), archive_of(runtime_with(40, "python3", "main_[p]", 9))},
                       {.perf_less = true});
  EXPECT_EQ(out.sessions.size(), 2u);
  EXPECT_EQ(folded(out), (Lines{"python3;main_[p] 9", "python3;native 1000"}));
}

TEST(MergeRuntime, RuntimeOfAnotherHostIsNotScaledIntoThisOne) {
  model::Session sys = session(SourceKind::system, "h1");
  model::SessionBuilder b(sys);
  add(b, 40, "native", 1000);
  model::Session other = session(SourceKind::system, "h2");
  model::SessionBuilder o(other);
  add(o, 40, "other", 4);
  model::Session rt = runtime_with(40, "python3", "main_[p]", 9);
  rt.header.host.hostname = "h2";
  auto out = run_merge({archive_of(sys), archive_of(other), archive_of(rt)});
  EXPECT_EQ(out.sessions.size(), 2u);
  EXPECT_EQ(out.sessions[0].header.host.hostname, "h1");
  EXPECT_EQ(total(out), 1004u);  // h2's pid 40 (4 samples) became 4 runtime samples
}

TEST(MergeRuntime, ErrorFrameRecognition) {
  EXPECT_TRUE(gp::merge::is_profiling_error_frame("[Profiling error: exception OSError]"));
  EXPECT_TRUE(gp::merge::is_profiling_error_frame("[Profiling skipped: profiled-oom]"));
  EXPECT_FALSE(gp::merge::is_profiling_error_frame("[Profiling error]"));
  EXPECT_FALSE(gp::merge::is_profiling_error_frame("[unknown]"));
  EXPECT_FALSE(gp::merge::is_profiling_error_frame("[Profiling : ]"));
}

TEST(MergeScale, RatioOneIsExactAndExpectationIsPreserved) {
  gp::merge::Rounder r(1, 1);
  EXPECT_EQ(r.scale(17, 1.0), 17u);
  EXPECT_EQ(r.scale(10, 0.5), 5u);
  uint64_t sum = 0;
  for (int i = 0; i < 10000; ++i) sum += r.scale(1, 0.25);  // 0 or 1, P(1) = 0.25
  EXPECT_NEAR(static_cast<double>(sum), 2500.0, 150.0);
  gp::merge::Rounder a(7, 3), b(7, 3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.scale(3, 0.37), b.scale(3, 0.37));
}

}  // namespace
}  // namespace gp::test::merge_runtime
