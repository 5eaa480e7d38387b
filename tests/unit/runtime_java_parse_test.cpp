// The Java adapters' output readers: JFR's `jfr print --json` (fixtures captured from
// OpenJDK 17 here) and async-profiler's collapsed format (fixtures written from its docs).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/java/ap_collapsed.h"
#include "runtime/java/jfr_samples.h"
#include "runtime/java/jvm_flags.h"
#include "runtime/java/jvm_process.h"
#include "gp/runtime/java_safemode.h"
#include "runtime/java/safemode.h"

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

TEST(JavaSafemode, CausesAsGprofilerReadsThem) {
  using gp::runtime::java_safemode_causes;
  EXPECT_EQ(java_safemode_causes("all").size(), std::size(gp::runtime::kJavaSafemodeCauses));
  EXPECT_TRUE(java_safemode_causes("").empty());
  EXPECT_TRUE(java_safemode_causes("\"\"").empty());  // a DaemonSet's --java-safemode=""
  std::vector<std::string> unknown;
  EXPECT_EQ(java_safemode_causes("hserr,bogus,,profiled-oom", &unknown),
            (std::vector<std::string>{"hserr", "profiled-oom"}));
  EXPECT_EQ(unknown, (std::vector<std::string>{"bogus", ""}));
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

TEST(JavaClassName, DottedWithArraysAsAsyncProfilerNamesAllocatedClasses) {
  EXPECT_EQ(java_class_name("[B"), "byte[]");
  EXPECT_EQ(java_class_name("[[I"), "int[][]");
  EXPECT_EQ(java_class_name("[Ljava/lang/String;"), "java.lang.String[]");
  EXPECT_EQ(java_class_name("java/util/HashMap$Node"), "java.util.HashMap$Node");
}

// Allocation events as `jfr print --json` prints them (fields as OpenJDK 17 gives them).
std::string allocation_event(const std::string& type, const std::string& weight_field, long bytes,
                             const std::string& cls) {
  return R"({"type": ")" + type + R"(", "values": {"eventThread": {"osName": "main",
      "osThreadId": 77, "javaName": "main"}, "stackTrace": {"truncated": false, "frames": [
      {"method": {"type": {"name": "Alloc"}, "name": "allocate", "descriptor": "(I)J"},
      "lineNumber": 3, "type": "JIT compiled"}, {"method": {"type": {"name": "Alloc"},
      "name": "main", "descriptor": "([Ljava/lang/String;)V"}, "type": "Interpreted"}]},
      "objectClass": {"name": ")" +
         cls + R"("}, ")" + weight_field + R"(": )" + std::to_string(bytes) + "}}";
}

TEST(JdkRelease, FeatureVersionFromJavaVersion) {
  EXPECT_EQ(parse_release_version("IMPLEMENTOR=\"Debian\"\nJAVA_VERSION=\"17.0.15\"\n"), 17);
  EXPECT_EQ(parse_release_version("JAVA_VERSION=\"1.8.0_392\"\nOS_NAME=\"Linux\"\n"), 8);
  EXPECT_EQ(parse_release_version("JAVA_VERSION=\"25\"\n"), 25);
  EXPECT_EQ(parse_release_version("JAVA_RUNTIME_VERSION=\"17.0.15+6\"\n"), 0);
  EXPECT_EQ(parse_release_version(""), 0);
}

// The version check's input: JDK 8's update (JFR came with 8u262), a later JDK's third number.
TEST(JdkRelease, FeatureAndUpdate) {
  using V = std::pair<int, int>;
  EXPECT_EQ(parse_release_java_version("JAVA_VERSION=\"1.8.0_100\"\n"), V(8, 100));
  EXPECT_EQ(parse_release_java_version("JAVA_VERSION=\"1.8.0_392\"\n"), V(8, 392));
  EXPECT_EQ(parse_release_java_version("A=1\nJAVA_VERSION=\"17.0.15\"\n"), V(17, 15));
  EXPECT_EQ(parse_release_java_version("JAVA_VERSION=\"25\"\n"), V(25, 0));
  EXPECT_EQ(parse_release_java_version("JAVA_RUNTIME_VERSION=\"17.0.15+6\"\n"), V(0, 0));
}

// gProfiler's excerpt of an hs_err file (granulate_utils' VM_INFO_REGEX, SIGINFO_REGEX,
// NATIVE_FRAMES_REGEX, CONTAINER_INFO_REGEX and java.py's PROBLEMATIC_FRAME_REGEX), on the
// sections of a file OpenJDK 17 wrote here for a JVM sent SIGSEGV.
TEST(HotspotError, ExcerptAsGprofiler) {
  std::string file =
      "#\n# Problematic frame:\n# C  [libc.so.6+0x85f14]\n#\n\n"
      "Native frames: (J=compiled Java code, j=interpreted, Vv=VM code, C=native code)\n"
      "C  [libc.so.6+0x85f14]\nj  Spin.main([Ljava/lang/String;)V+5\n\n"
      "siginfo: si_signo: 11 (SIGSEGV), si_code: 0 (SI_USER), si_pid: 30966, si_uid: 0\n\n"
      "container (cgroup) information:\ncontainer_type: cgroupv1\n\n"
      "vm_info: OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1) for linux-amd64\n";
  EXPECT_EQ(hotspot_error_excerpt(file),
            "VM info: OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1) for linux-amd64\n"
            "siginfo: si_signo: 11 (SIGSEGV), si_code: 0 (SI_USER), si_pid: 30966, si_uid: 0\n"
            "Problematic frame: C  [libc.so.6+0x85f14]\n"
            "native frames:\nC  [libc.so.6+0x85f14]\nj  Spin.main([Ljava/lang/String;)V+5\n"
            "container info:\ncontainer_type: cgroupv1");
}

TEST(JfrJson, AllocationSamplesAreWeightedInBytesWithTheClassAsLeaf) {
  std::istringstream in(
      R"({"recording": {"events": [)" +
      allocation_event("jdk.ObjectAllocationSample", "weight", 4000, "[B") + ", " +
      allocation_event("jdk.ObjectAllocationSample", "weight", 6000, "[B") + "]}}");
  StackTable table;
  auto stats = read_jfr_json(in, table, JfrEvents::allocation);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->events, 2u);
  auto stacks = table.take();
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0].count, 10000u);
  EXPECT_EQ(stacks[0].tid, 77);
  EXPECT_EQ(names(stacks[0]), (std::vector<std::string>{"Alloc.main([Ljava/lang/String|)V",
                                                        "Alloc.allocate(I)J", "byte[]"}));
  EXPECT_EQ(stacks[0].frames.back().kind, FrameKind::inlined);  // async-profiler's "_[i]"
}

TEST(JfrJson, TlabEventsCountTheirSizesAndGiveWayToSamples) {
  std::string tlab = allocation_event("jdk.ObjectAllocationInNewTLAB", "tlabSize", 65536, "[B") +
                     ", " +
                     allocation_event("jdk.ObjectAllocationOutsideTLAB", "allocationSize", 1 << 20,
                                      "[Ljava/lang/String;");
  {
    std::istringstream in(R"({"recording": {"events": [)" + tlab + "]}}");
    StackTable table;
    auto stats = read_jfr_json(in, table, JfrEvents::allocation);
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->events, 2u);
    uint64_t total = 0;
    for (const Stack& s : table.take()) {
      total += s.count;
      bool outside = s.frames.back().name == "java.lang.String[]";
      EXPECT_EQ(s.frames.back().kind, outside ? FrameKind::kernel : FrameKind::inlined);
    }
    EXPECT_EQ(total, 65536u + (1u << 20));
  }
  // Both kinds in one recording (JDK version unknown): the samples alone, not twice the bytes.
  std::istringstream in(R"({"recording": {"events": [)" + tlab + ", " +
                        allocation_event("jdk.ObjectAllocationSample", "weight", 5000, "[B") +
                        "]}}");
  StackTable table;
  auto stats = read_jfr_json(in, table, JfrEvents::allocation);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->events, 1u);
  EXPECT_EQ(table.take()[0].count, 5000u);
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

TEST(JavaFrameName, LineOfFunctionGoesAfterTheMethodName) {
  // gProfiler tests/test_java.py, test_including_line_numbers: "Fibonacci.fibonacci:20(I)J_[j]".
  EXPECT_EQ(java_frame_name("Fibonacci", "fibonacci", "(I)J", 20), "Fibonacci.fibonacci:20(I)J");
  EXPECT_EQ(java_frame_name("Fibonacci", "fibonacci", "(I)J", 0), "Fibonacci.fibonacci(I)J");
}

TEST(ThreadFrames, RootEachStackAtItsThreadAsAsyncProfilerThreadsDoes) {
  // async-profiler's frameName.cpp: "[<name> tid=<tid>]", "[tid=<tid>]" without a name.
  StackTable table;
  read_ap_collapsed(slurp(fixture("async_profiler_collapsed.txt")), table);
  gp::runtime::Profile p;
  p.stacks = table.take();
  gp::runtime::Stack anonymous;
  anonymous.tid = 7;
  anonymous.count = 1;
  p.stacks.push_back(anonymous);
  gp::runtime::add_thread_frames(p);
  EXPECT_EQ(p.stacks[0].frames[0].name, "[main tid=4242]");
  EXPECT_EQ(p.stacks[0].frames[0].kind, FrameKind::pseudo);
  EXPECT_EQ(p.stacks[0].frames[1].name, "Main.main([Ljava/lang/String|)V");
  EXPECT_EQ(p.stacks[3].frames[0].name, "[C2 CompilerThread0 tid=4250]");
  EXPECT_EQ(p.stacks.back().frames[0].name, "[tid=7]");
}

TEST(JvmFlags, ParsedAndFilteredAsGProfiler) {
  // Lines of OpenJDK 17's `jcmd PID VM.flags -all` (java -Xmx64m) and one of JDK 8's.
  const std::string text =
      "12345:\n"
      "[Global flags]\n"
      "      int ActiveProcessorCount                     = -1                                "
      "        {product} {default}\n"
      "     intx CICompilerCount                          = 2                                 "
      "        {product} {ergonomic}\n"
      "    ccstr ErrorFile                                =                                   "
      "        {product} {default}\n"
      "   size_t MaxHeapSize                              = 67108864                          "
      "        {product} {command line}\n"
      "    uintx NonNMethodCodeHeapSize                   = 5826188                           "
      "     {pd product} {ergonomic}\n"
      "   size_t SoftMaxHeapSize                          = 67108864                          "
      "     {manageable} {ergonomic}\n"
      "     bool UseCompressedClassPointers               = true                        "
      "   {product lp64_product} {ergonomic}\n"
      "     bool UseSerialGC                             := true                              "
      "      {product}\n";
  auto flags = parse_jvm_flags(text);
  ASSERT_EQ(flags.size(), 7u);  // the empty ccstr does not parse, as granulate_utils' regex
  EXPECT_EQ(flags[2].name, "MaxHeapSize");
  EXPECT_EQ(flags[2].origin, "command line");
  EXPECT_EQ(flags[5].kind, (std::vector<std::string>{"lp64_product", "product"}));
  EXPECT_EQ(flags[6].origin, "non-default");  // JDK 8's ":="
  auto dump = [](const json::Value& v) { return json::dump(v); };
  EXPECT_EQ(dump(collect_jvm_flags(flags, "none")), "[]");
  std::string def = dump(collect_jvm_flags(flags, "default"));
  EXPECT_EQ(def.find("ActiveProcessorCount"), std::string::npos);    // default origin
  EXPECT_EQ(def.find("NonNMethodCodeHeapSize"), std::string::npos);  // pd
  EXPECT_EQ(def.find("SoftMaxHeapSize"), std::string::npos);         // manageable
  EXPECT_LT(def.find("CICompilerCount"), def.find("MaxHeapSize"));   // sorted by name
  EXPECT_NE(def.find("UseSerialGC"), std::string::npos);
  std::vector<std::string> missing;
  auto listed = collect_jvm_flags(flags, "MaxHeapSize, NoSuchFlag", &missing);
  ASSERT_EQ(listed.items.size(), 1u);
  EXPECT_EQ(listed.items[0].get_string("origin"), "command line");
  EXPECT_EQ(missing, (std::vector<std::string>{"NoSuchFlag"}));
  EXPECT_EQ(collect_jvm_flags(flags, "all").items.size(), 6u);  // not the manageable one
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
