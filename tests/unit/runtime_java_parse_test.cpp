// The Java adapters' output readers: JFR's `jfr print --json` (fixtures captured from
// OpenJDK 17 here) and async-profiler's collapsed format (fixtures written from its docs).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/java/ap_collapsed.h"
#include "runtime/java/jfr_samples.h"

namespace gp::test::runtime_java {
namespace {

using gp::model::FrameKind;
using gp::runtime::Stack;
using namespace gp::runtime::java;

std::string fixture(const std::string& name) {
  return std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/java/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> names(const Stack& s) {
  std::vector<std::string> out;
  for (const auto& f : s.frames) out.push_back(f.name);
  return out;
}

TEST(JavaFrameName, FollowsAsyncProfilerSignatureStyle) {
  EXPECT_EQ(java_frame_name("Fibonacci", "main", "([Ljava/lang/String;)V"),
            "Fibonacci.main([Ljava/lang/String|)V");
  EXPECT_EQ(java_frame_name("java/util/HashMap", "merge",
                            "(Ljava/lang/Object;Ljava/lang/Object;Ljava/util/function/BiFunction;)"
                            "Ljava/lang/Object;"),
            "java/util/HashMap.merge(Ljava/lang/Object|Ljava/lang/Object|Ljava/util/function/"
            "BiFunction|)Ljava/lang/Object|");
  EXPECT_EQ(java_frame_name("Main", "spin", "(J)J"), "Main.spin(J)J");
}

TEST(JfrJson, ReadsCapturedMainSamplesRootFirst) {
  std::ifstream in(fixture("main_execution_samples.json"), std::ios::binary);
  StackTable table;
  auto stats = read_jfr_json(in, table);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->events, 3u);
  EXPECT_EQ(stats->truncated, 0u);
  EXPECT_EQ(stats->bad, 0u);
  auto stacks = table.take();
  // Two samples ended in spin (one stack, count 2), one in work itself.
  ASSERT_EQ(stacks.size(), 2u);
  const Stack* spin = stacks[0].frames.size() == 3 ? &stacks[0] : &stacks[1];
  const Stack* work = spin == &stacks[0] ? &stacks[1] : &stacks[0];
  EXPECT_EQ(names(*spin), (std::vector<std::string>{"Main.main([Ljava/lang/String|)V",
                                                    "Main.work()V", "Main.spin(J)J"}));
  EXPECT_EQ(spin->count, 2u);
  EXPECT_EQ(names(*work),
            (std::vector<std::string>{"Main.main([Ljava/lang/String|)V", "Main.work()V"}));
  EXPECT_EQ(work->count, 1u);
  for (const auto& f : spin->frames) EXPECT_EQ(f.kind, FrameKind::java) << f.name;
  EXPECT_EQ(spin->thread_name, "main");
  EXPECT_GT(spin->tid, 0);
  EXPECT_EQ(spin->frames[0].line, 10u);  // the line of main() the sample was at
}

TEST(JfrJson, KeepsPackagesInnerClassesAndSignatures) {
  std::ifstream in(fixture("hashmap_execution_sample.json"), std::ios::binary);
  StackTable table;
  auto stats = read_jfr_json(in, table);
  ASSERT_TRUE(stats) << stats.error().message;
  auto stacks = table.take();
  ASSERT_EQ(stacks.size(), 1u);
  auto n = names(stacks[0]);
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[0], "demo/Maps.main([Ljava/lang/String|)V");
  EXPECT_EQ(n[1], "demo/Maps$Counter.bump(Ljava/lang/String|Ljava/util/HashMap|)V");
  EXPECT_EQ(n[2],
            "java/util/HashMap.merge(Ljava/lang/Object|Ljava/lang/Object|Ljava/util/function/"
            "BiFunction|)Ljava/lang/Object|");
  EXPECT_EQ(n[4], "java/lang/Long.sum(JJ)J");
}

TEST(JfrJson, InlinedFramesAreMarkedAsAsyncProfilerDoes) {
  auto v = json::parse(R"({"method": {"type": {"name": "Main"}, "name": "spin",
                          "descriptor": "(J)J"}, "lineNumber": 20, "type": "Inlined"})");
  ASSERT_TRUE(v);
  auto f = jfr_frame(*v);
  EXPECT_EQ(f.name, "Main.spin(J)J");
  EXPECT_EQ(f.kind, FrameKind::inlined);
  EXPECT_EQ(f.line, 20u);
}

TEST(JfrJson, RefusesTextThatIsNotJfrJson) {
  std::istringstream in("jdk.ExecutionSample {\n  startTime = 07:17:27.087\n}\n");
  StackTable table;
  EXPECT_FALSE(read_jfr_json(in, table));
}

TEST(JfrJson, SkipsBrokenEventsAndCountsThem) {
  std::istringstream in(R"({"recording": {"events": [{"type": "jdk.ExecutionSample",
      "values": {"sampledThread": null}}, {"type": "jdk.ExecutionSample", "values":
      {"stackTrace": {"truncated": true, "frames": [{"method": {"type": {"name": "A"},
      "name": "b", "descriptor": "()V"}, "type": "JIT compiled"}]}}}]}})");
  StackTable table;
  auto stats = read_jfr_json(in, table);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->events, 1u);
  EXPECT_EQ(stats->bad, 1u);
  EXPECT_EQ(stats->truncated, 1u);
  EXPECT_EQ(names(table.take()[0]), std::vector<std::string>{"A.b()V"});
}

TEST(AsyncProfilerCollapsed, ReadsAnnotationsAndThreadFrames) {
  StackTable table;
  auto stats = read_ap_collapsed(slurp(fixture("async_profiler_collapsed.txt")), table);
  EXPECT_EQ(stats.lines, 5u);
  EXPECT_EQ(stats.bad_lines, 0u);
  auto stacks = table.take();
  ASSERT_EQ(stacks.size(), 5u);
  const Stack& hot = stacks[0];
  EXPECT_EQ(hot.tid, 4242);
  EXPECT_EQ(hot.thread_name, "main");
  EXPECT_EQ(hot.count, 21u);
  EXPECT_EQ(names(hot), (std::vector<std::string>{"Main.main([Ljava/lang/String|)V", "Main.work()V",
                                                  "Main.spin(J)J"}));
  EXPECT_EQ(hot.frames[0].kind, FrameKind::java);     // _[0] interpreted
  EXPECT_EQ(hot.frames[1].kind, FrameKind::java);     // _[j]
  EXPECT_EQ(hot.frames[2].kind, FrameKind::inlined);  // _[i]
  const Stack& sys = stacks[2];
  ASSERT_EQ(sys.frames.size(), 7u);
  EXPECT_EQ(sys.frames[1].kind, FrameKind::java);  // _[1] C1 compiled
  EXPECT_EQ(sys.frames[3].name, "os::javaTimeMillis");
  EXPECT_EQ(sys.frames[3].kind, FrameKind::native);
  EXPECT_EQ(sys.frames[6].name, "do_syscall_64");
  EXPECT_EQ(sys.frames[6].kind, FrameKind::kernel);
  EXPECT_EQ(stacks[3].thread_name, "C2 CompilerThread0");
  EXPECT_EQ(stacks[3].tid, 4250);
  EXPECT_EQ(stacks[3].frames[0].name, "start_thread");
}

TEST(AsyncProfilerCollapsed, ReadsTheDocumentedExampleVerbatim) {
  StackTable table;
  auto stats = read_ap_collapsed(slurp(fixture("async_profiler_docs_collapsed.txt")), table);
  EXPECT_EQ(stats.lines, 8u);
  EXPECT_EQ(stats.bad_lines, 0u);
  EXPECT_EQ(table.samples(), 21u + 1 + 5 + 12 + 3 + 6 + 12 + 1);
  auto stacks = table.take();
  // A frame may hold spaces: only the last space separates the count.
  EXPECT_EQ(stacks.back().frames.back().name,
            "void ContiguousSpace::oop_since_save_marks_iterate<DefNewScanClosure>");
  EXPECT_EQ(stacks.back().tid, 0);
  EXPECT_EQ(stacks[0].frames[0].kind, FrameKind::native);  // no -a: no Java marker
}

TEST(AsyncProfilerCollapsed, SkipsLinesWithoutACount) {
  StackTable table;
  auto stats = read_ap_collapsed("a;b 3\nno count here\n\nc;d x\n;  \na;b 2\n", table);
  EXPECT_EQ(stats.lines, 2u);
  EXPECT_EQ(stats.bad_lines, 3u);
  auto stacks = table.take();
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0].count, 5u);
}

}  // namespace
}  // namespace gp::test::runtime_java
