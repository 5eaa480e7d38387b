// The rbspy, phpspy and speedscope (dotnet-trace) parsers on fixtures written from each tool's
// documented output (tests/fixtures/runtime/spies/README.md), and on broken variants of them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/spies/spy_output.h"

namespace gp::runtime::spies {
namespace {

using model::FrameKind;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/spies/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

std::string names(const Stack& st) {
  std::string s;
  for (const Frame& f : st.frames) s += (s.empty() ? "" : ";") + f.name;
  return s;
}

// --- rbspy ---------------------------------------------------------------------------------

TEST(RbspyOutput, FixtureGivesRubyFramesRootFirstWithFileAndLine) {
  SpyOutput out = parse_rbspy_collapsed(fixture("rbspy_collapsed.txt"));
  EXPECT_EQ(out.skipped, 0u) << out.first_problem;
  ASSERT_EQ(out.stacks.size(), 3u);
  EXPECT_EQ(names(out.stacks[0]),
            "<main> - /app/server.rb:30;block in serve - /app/server.rb:12;"
            "Handler#call - /app/handler.rb:8;fib - /app/fib.rb:3");
  EXPECT_EQ(out.stacks[0].count, 7u);
  EXPECT_EQ(out.stacks[1].count, 2u);
  EXPECT_EQ(out.stacks[2].count, 1u);
  const Frame& leaf = out.stacks[0].frames.back();
  EXPECT_EQ(leaf.kind, FrameKind::ruby);
  EXPECT_EQ(leaf.file, "/app/fib.rb");
  EXPECT_EQ(leaf.line, 3u);
  for (const Stack& st : out.stacks)
    for (const Frame& f : st.frames) EXPECT_EQ(f.kind, FrameKind::ruby) << f.name;
  // rbspy's unknown C frames: no file, no line.
  const Frame& c = out.stacks[1].frames.back();
  EXPECT_EQ(c.name, "sleep [c function] - (unknown):0");
  EXPECT_EQ(c.file, "");
  EXPECT_EQ(c.line, 0u);
}

TEST(RbspyOutput, FrameWithDashInNameAndColonInPath) {
  Frame f = parse_rbspy_frame("block (2 levels) in a - b - C:/srv/app.rb:77");
  EXPECT_EQ(f.file, "C:/srv/app.rb");
  EXPECT_EQ(f.line, 77u);
  Frame bare = parse_rbspy_frame("<main>");
  EXPECT_EQ(bare.name, "<main>");
  EXPECT_EQ(bare.file, "");
}

TEST(RbspyOutput, MalformedLinesAreSkippedAndCounted) {
  std::string text = fixture("rbspy_collapsed.txt");
  text += "nocount\n";                   // no count
  text += "a - x.rb:1;b - y.rb:2 x\n";   // count not a number
  text += "a - x.rb:1;;b - y.rb:2 3\n";  // empty frame
  text += "a - x.rb:1 0\n";              // zero count
  text += "a - x.rb:1;b - y.rb:2 1";     // cut line without a newline: still whole, kept
  SpyOutput out = parse_rbspy_collapsed(text);
  EXPECT_EQ(out.skipped, 4u);
  EXPECT_EQ(out.first_problem, "line 4: no sample count");
  ASSERT_EQ(out.stacks.size(), 4u);
  EXPECT_EQ(names(out.stacks[3]), "a - x.rb:1;b - y.rb:2");
}

TEST(RbspyOutput, TruncatedAndBinaryInputNeverCrash) {
  std::string text = fixture("rbspy_collapsed.txt");
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    SpyOutput out = parse_rbspy_collapsed(std::string_view(text).substr(0, cut));
    uint64_t total = 0;
    for (const Stack& st : out.stacks) total += st.count;
    EXPECT_LE(total, 10u);
  }
  std::string junk("\0\xff;; 9\n\n;\n 1\n", 13);
  SpyOutput out = parse_rbspy_collapsed(junk);
  EXPECT_TRUE(out.stacks.empty());
  EXPECT_EQ(out.skipped, 3u);
}

// --- phpspy --------------------------------------------------------------------------------

TEST(PhpspyOutput, FixtureBlocksOfThePidBecomeAggregatedPhpStacks) {
  PhpspyOutput out = parse_phpspy(fixture("phpspy_output.txt"), 4242);
  EXPECT_EQ(out.skipped, 0u) << out.first_problem;
  EXPECT_EQ(out.other_pids, 1u);
  EXPECT_EQ(out.without_pid, 0u);
  ASSERT_EQ(out.stacks.size(), 2u);
  // Root first: phpspy's depth 0 is the leaf.
  EXPECT_EQ(names(out.stacks[0]),
            "<main> /var/www/htdocs/index.php:5;"
            "Cache_Memcached::get /var/www/lib/Cache/Memcached.php:251;usleep <internal>:-1");
  EXPECT_EQ(out.stacks[0].count, 2u);
  EXPECT_EQ(names(out.stacks[1]),
            "<main> /var/www/htdocs/index.php:9;Renderer::draw /var/www/lib/Renderer.php:88");
  EXPECT_EQ(out.stacks[1].count, 1u);
  const Frame& get = out.stacks[0].frames[1];
  EXPECT_EQ(get.kind, FrameKind::php);
  EXPECT_EQ(get.file, "/var/www/lib/Cache/Memcached.php");
  EXPECT_EQ(get.line, 251u);
  const Frame& internal = out.stacks[0].frames[2];
  EXPECT_EQ(internal.kind, FrameKind::php);
  EXPECT_EQ(internal.file, "");
  EXPECT_EQ(internal.line, 0u);
}

TEST(PhpspyOutput, OtherPidOnlyGetsItsOwnBlock) {
  PhpspyOutput out = parse_phpspy(fixture("phpspy_output.txt"), 5151);
  EXPECT_EQ(out.other_pids, 3u);
  ASSERT_EQ(out.stacks.size(), 1u);
  EXPECT_EQ(names(out.stacks[0]), "<main> /var/www/htdocs/other.php:17;strlen <internal>:-1");
}

TEST(PhpspyOutput, MalformedBlocksAreSkippedAndCounted) {
  std::string text =
      "0 a /x.php:1\n2 b /x.php:2\n# pid = 7\n\n"       // depth jumps 0 → 2
      "0 a /x.php:1\n# pid = seven\n\n"                 // bad pid
      "zero a /x.php:1\n# pid = 7\n\n"                  // no depth
      "# pid = 7\n\n"                                   // no frames
      "0 a /x.php:1\n1 <main> /x.php:9\n# pid = 7\n\n"  // good
      "0 a /x.php:1\n1 <main> /x.php:9\n";              // cut: no pid, no blank line
  PhpspyOutput out = parse_phpspy(text, 7);
  EXPECT_EQ(out.skipped, 5u);
  EXPECT_EQ(out.first_problem, "block at line 1: frame depth 2 where 1 was expected");
  ASSERT_EQ(out.stacks.size(), 1u);
  EXPECT_EQ(out.stacks[0].count, 1u);
}

TEST(PhpspyOutput, BlocksWithoutPidLineAreKeptAndCounted) {
  PhpspyOutput out = parse_phpspy("0 sleep <internal>:-1\n1 <main> <internal>:-1\n\n", 9);
  EXPECT_EQ(out.without_pid, 1u);
  ASSERT_EQ(out.stacks.size(), 1u);
  EXPECT_EQ(out.stacks[0].frames[0].file, "");
}

TEST(PhpspyOutput, EveryTruncationParsesWithoutCrash) {
  std::string text = fixture("phpspy_output.txt");
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    PhpspyOutput out = parse_phpspy(std::string_view(text).substr(0, cut), 4242);
    uint64_t total = 0;
    for (const Stack& st : out.stacks) total += st.count;
    EXPECT_LE(total, 3u) << cut;
  }
}

// --- speedscope (dotnet-trace) -------------------------------------------------------------

TEST(SpeedscopeInput, EventedProfilesBecomeSamplesOfTheOpenStack) {
  SpyOutput out = parse_speedscope(fixture("dotnet_trace.speedscope.json"), 100);
  EXPECT_EQ(out.skipped, 0u) << out.first_problem;
  ASSERT_EQ(out.stacks.size(), 4u);
  const std::string main = "MyApp!MyApp.Program.Main(class System.String[])";
  const std::string work = "MyApp!MyApp.Worker.Work()";
  EXPECT_EQ(names(out.stacks[0]), main + ";" + work + ";MyApp!MyApp.Worker.Compute(int32)");
  EXPECT_EQ(out.stacks[0].count, 5u);  // 0..50 ms at 10 ms
  EXPECT_EQ(names(out.stacks[1]),
            main + ";" + work + ";System.Private.CoreLib.il!System.Threading.Thread.Sleep(int32)");
  EXPECT_EQ(out.stacks[1].count, 3u);  // 50..80 ms
  EXPECT_EQ(names(out.stacks[2]), main);
  EXPECT_EQ(out.stacks[2].count, 2u);  // 80..100 ms
  EXPECT_EQ(names(out.stacks[3]), main + ";MyApp!MyApp.Worker.Other()");
  EXPECT_EQ(out.stacks[3].count, 2u);  // 25.5 ms
  EXPECT_EQ(out.stacks[0].tid, 4242);
  EXPECT_EQ(out.stacks[0].thread_name, "Thread (4242)");
  EXPECT_EQ(out.stacks[3].tid, 4243);
  const Frame& compute = out.stacks[0].frames[2];
  EXPECT_EQ(compute.kind, FrameKind::dotnet);
  EXPECT_EQ(compute.file, "/src/MyApp/Worker.cs");
  EXPECT_EQ(compute.line, 42u);
  for (const Stack& st : out.stacks)
    for (const Frame& f : st.frames) EXPECT_EQ(f.kind, FrameKind::dotnet);
}

TEST(SpeedscopeInput, FrequencyScalesTheSampleCount) {
  SpyOutput out = parse_speedscope(fixture("dotnet_trace.speedscope.json"), 11);
  uint64_t total = 0;
  for (const Stack& st : out.stacks) total += st.count;
  // 100 ms + 25.5 ms at 1000/11 ms: carried remainders give floor(1.1) + floor(0.2805) per thread.
  EXPECT_EQ(total, 1u);
}

TEST(SpeedscopeInput, SampledProfilesUseTheirWeights) {
  std::string doc = R"json({"$schema": "https://www.speedscope.app/file-format-schema.json",
    "shared": {"frames": [{"name": "a"}, {"name": "b", "file": "b.cs", "line": 3}]},
    "profiles": [
      {"type": "sampled", "name": "counts", "unit": "none", "startValue": 0, "endValue": 5,
       "samples": [[0, 1], [0], [0, 1]], "weights": [2, 1, 3]},
      {"type": "sampled", "name": "times", "unit": "milliseconds", "startValue": 0,
       "endValue": 30, "samples": [[1]], "weights": [30]}]})json";
  SpyOutput out = parse_speedscope(doc, 100);
  EXPECT_EQ(out.skipped, 0u) << out.first_problem;
  ASSERT_EQ(out.stacks.size(), 3u);
  EXPECT_EQ(names(out.stacks[0]), "a;b");
  EXPECT_EQ(out.stacks[0].count, 5u);
  EXPECT_EQ(names(out.stacks[1]), "a");
  EXPECT_EQ(out.stacks[1].count, 1u);
  EXPECT_EQ(names(out.stacks[2]), "b");
  EXPECT_EQ(out.stacks[2].count, 3u);
  EXPECT_EQ(out.stacks[2].frames[0].file, "b.cs");
}

TEST(SpeedscopeInput, BrokenEventsAreSkippedAndCounted) {
  std::string doc = R"json({"shared": {"frames": [{"name": "a"}, {"name": "b"}]},
    "profiles": [{"type": "evented", "name": "Thread (1)", "unit": "milliseconds",
      "startValue": 0, "endValue": 40, "events": [
        {"type": "O", "frame": 0, "at": 0},
        {"type": "O", "frame": 9, "at": 0},
        {"type": "X", "frame": 1, "at": 0},
        {"type": "O", "frame": 1, "at": "ten"},
        {"type": "O", "frame": 1, "at": 10},
        {"type": "C", "frame": 0, "at": 20},
        {"type": "C", "frame": 0, "at": 30}]},
     {"type": "evented", "name": "no unit", "startValue": 0, "events": []},
     {"type": "flat"}]})json";
  SpyOutput out = parse_speedscope(doc, 100);
  // frame 9, type X, at "ten", close of a non-innermost frame, close of a closed frame,
  // the profile with no unit, the unknown type.
  EXPECT_EQ(out.skipped, 7u) << out.first_problem;
  ASSERT_EQ(out.stacks.size(), 2u);
  EXPECT_EQ(names(out.stacks[0]), "a");
  EXPECT_EQ(out.stacks[0].count, 1u);
  EXPECT_EQ(names(out.stacks[1]), "a;b");
  EXPECT_EQ(out.stacks[1].count, 1u);
}

TEST(SpeedscopeInput, NotJsonOrNotSpeedscopeIsOneProblem) {
  EXPECT_EQ(parse_speedscope("{\"profiles\": [", 100).skipped, 1u);
  EXPECT_EQ(parse_speedscope("[1, 2]", 100).skipped, 1u);
  EXPECT_EQ(parse_speedscope("", 100).skipped, 1u);
  std::string text = fixture("dotnet_trace.speedscope.json");
  for (size_t cut = 0; cut < text.size(); cut += 7) {
    SpyOutput out = parse_speedscope(std::string_view(text).substr(0, cut), 100);
    EXPECT_EQ(out.skipped, 1u);
    EXPECT_TRUE(out.stacks.empty());
  }
}

}  // namespace
}  // namespace gp::runtime::spies
