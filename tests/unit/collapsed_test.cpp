// ingest: .col / folded text → session, and read_profile's format dispatch.

#include <gtest/gtest.h>

#include <fstream>

#include "gp/archive/writer.h"
#include "gp/fold/stacks.h"
#include "gp/ingest/collapsed.h"
#include "gp/ingest/input.h"
#include "gp/model/builder.h"

namespace gp::test::ingest {
namespace {

using gp::ingest::InputFormat;
using gp::ingest::parse_collapsed;
using model::FrameKind;

// Root-first "name/kind" strings of every stack, with counts, via the public fold step.
std::vector<std::string> render(const model::Archive& a) {
  std::vector<std::string> out;
  for (const auto& st : fold::fold_stacks(a, {})) {
    std::string line;
    for (const auto& f : st.frames) line += f.name + "/" + model::to_string(f.kind) + ";";
    out.push_back(line + " " + std::to_string(st.count));
  }
  return out;
}

TEST(CollapsedReader, SplitsAtTheLastSpaceAndSumsIdenticalStacks) {
  auto a = parse_collapsed("app;main;do work 3\n\napp;main;do work 4\n# comment\napp;main 1\n");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_FALSE(a->truncated);
  ASSERT_EQ(a->sessions.size(), 1u);
  EXPECT_EQ(a->sessions[0].header.source, model::SourceKind::folded);
  EXPECT_EQ(render(*a), (std::vector<std::string>{"app/pseudo;main/unknown; 1",
                                                  "app/pseudo;main/unknown;do work/unknown; 7"}));
}

TEST(CollapsedReader, MapsSuffixesToKindsAndStripsThem) {
  auto a =
      parse_collapsed("p;a_[k];b_[j];c_[p];d_[pn];e_[rb];f_[php];g_[net];h_[i];x_[pe];y_[1];z 1");
  ASSERT_TRUE(a);
  EXPECT_EQ(render(*a), std::vector<std::string>{
                            "p/pseudo;a/kernel;b/java;c/python;d/python-native;e/ruby;f/php;"
                            "g/dotnet;h/inlined;x_[pe]/unknown;y_[1]/unknown;z/unknown; 1"});
}

TEST(CollapsedReader, KeepsPipesAndSpacesInFrames) {
  auto a = parse_collapsed("java;Foo.bar(Ljava/lang/String|)V_[j];operator new (x) 2\r\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(render(*a),
            std::vector<std::string>{
                "java/pseudo;Foo.bar(Ljava/lang/String|)V/java;operator new (x)/unknown; 2"});
}

const char* kColHeader =
    R"(# {"containers": ["web"], "container_names_enabled": true, "metadata": {"hostname": "h1", )"
    R"("kernel_release": "6.1.0", "processors": 4, "run_arguments": {"profile_api_version": "v2"}}, )"
    R"("metrics": {"cpu_avg": 8.8, "mem_avg": 39.8}, "application_metadata": [null, {"exe": "/usr/bin/python3"}], )"
    R"("application_metadata_enabled": true, "profiling_mode": "cpu", "hwmetrics": null, "htmlblob": null, )"
    R"("flamegraph_html": null, "sampling_event": "cpu-time", "sampling_mode": "frequency", "sampling_frequency": 11})";

TEST(CollapsedReader, ReadsColPrefixFramesIntoProcesses) {
  std::string text =
      std::string(kColHeader) +
      "\n0;;swapper;do_idle_[k] 655"
      "\n1;web;python;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p] 12"
      "\n1;web;python;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p] 3"
      "\n0;;java;[Profiling skipped: profiled-oom];start_thread 3";
  auto a = parse_collapsed(text, "x.col");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_FALSE(a->truncated) << a->problem;
  const model::Session& s = a->sessions[0];
  EXPECT_EQ(s.header.host.hostname, "h1");
  EXPECT_EQ(s.header.host.kernel_release, "6.1.0");
  EXPECT_EQ(s.header.host.cpu_count, 4u);
  EXPECT_EQ(s.header.sampling.event, "cpu-clock");
  EXPECT_EQ(s.header.sampling.frequency_hz, 11u);
  EXPECT_EQ(s.header.metadata_json.substr(0, 19), R"({"hostname": "h1", )");
  ASSERT_EQ(s.processes.size(), 2u);  // swapper is pid 0 and has only a thread
  const model::Process& py = s.processes[0];
  EXPECT_EQ(py.comm, "python");
  EXPECT_EQ(py.container_name, "web");
  EXPECT_EQ(py.appid, "python: app.py (/srv/app.py)");
  EXPECT_EQ(py.app_metadata_json, R"({"exe": "/usr/bin/python3"})");
  EXPECT_EQ(s.processes[1].app_metadata_json, "");
  EXPECT_EQ(
      render(*a),
      (std::vector<std::string>{
          "java/pseudo;[Profiling skipped: profiled-oom]/pseudo;start_thread/unknown; 3",
          "python/pseudo;main (/srv/app.py:10)/python; 15", "swapper/pseudo;do_idle/kernel; 655"}));
  uint64_t idle = 0;
  for (const auto& smp : s.samples)
    if (smp.pid == 0) idle += smp.count;
  EXPECT_EQ(idle, 655u);
}

TEST(CollapsedReader, ReadsApiV1LinesWithoutIndexAndContainer) {
  std::string text =
      R"(# {"metadata": {"run_arguments": {"profile_api_version": "v1"}}, "application_metadata": [null], )"
      R"("application_metadata_enabled": true})"
      "\npython;main 2";
  auto a = parse_collapsed(text);
  ASSERT_TRUE(a);
  EXPECT_EQ(render(*a), std::vector<std::string>{"python/pseudo;main/unknown; 2"});
}

TEST(CollapsedReader, ReadsColWithoutApplicationMetadataIndex) {
  std::string text = R"(# {"application_metadata": [null], "application_metadata_enabled": false})"
                     "\n;python;main 2";
  auto a = parse_collapsed(text);
  ASSERT_TRUE(a);
  EXPECT_EQ(render(*a), std::vector<std::string>{"python/pseudo;main/unknown; 2"});
}

TEST(CollapsedReader, SkipsAndCountsMalformedLines) {
  auto a = parse_collapsed("a;b 1\nno-count-here\na;c x1\na;b 2\n", "in.folded");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->truncated);
  EXPECT_EQ(a->problem,
            "profile 'in.folded' has 2 malformed lines, skipped (first: line 2: no count after "
            "the last space)");
  EXPECT_EQ(render(*a), std::vector<std::string>{"a/pseudo;b/unknown; 3"});
}

TEST(CollapsedReader, RejectsBadIndexInCol) {
  std::string text = std::string(kColHeader) + "\n7;;python;main 1\n0;;python;main 1";
  auto a = parse_collapsed(text);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->truncated);
  EXPECT_NE(a->problem.find("line 2: application metadata index '7'"), std::string::npos);
}

TEST(CollapsedReader, FailsWhenNoLineIsValid) {
  auto a = parse_collapsed("hello world\nthis is prose\n", "notes.txt");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message.substr(0, 42), "'notes.txt' is not a collapsed profile: li");
}

TEST(Sniff, RecognisesEachFormat) {
  EXPECT_EQ(gp::ingest::sniff("# {\"a\": 1}\n0;;x 1"), InputFormat::collapsed);
  EXPECT_EQ(gp::ingest::sniff("a;b;c 12\n"), InputFormat::collapsed);
  EXPECT_EQ(gp::ingest::sniff("# comment\n\na;b 3"), InputFormat::collapsed);
  EXPECT_EQ(gp::ingest::sniff(
                "perf 123/123 [000] 1.0: 1 cpu-clock:\n\tffffffff81000000 f ([kernel.kallsyms])\n"),
            InputFormat::perf_script);
  EXPECT_EQ(gp::ingest::sniff("hello world\n"), InputFormat::unknown);
  EXPECT_EQ(gp::ingest::sniff(std::string("\x04\x22\x4d\x18rest", 8)), InputFormat::archive);
}

class ReadProfile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& data) {
    std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }
};

TEST_F(ReadProfile, ReadsArchivesAndText) {
  model::Archive src;
  model::Session& s = src.sessions.emplace_back();
  model::SessionBuilder b(s);
  model::Process p;
  p.pid = 42;
  p.comm = "worker";
  b.process(p);
  uint64_t loc = b.symbolic_location(FrameKind::native, b.function("main"));
  b.add_sample(42, 42, b.stack({loc}), 5);
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, true);
  ASSERT_TRUE(archive::write_archive(*out, src));
  ASSERT_TRUE(out->close());

  auto a = gp::ingest::read_profile(write("p.gpa", bytes));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(render(*a), std::vector<std::string>{"worker/pseudo;main/native; 5"});

  auto t = gp::ingest::read_profile(write("p.folded", "worker;main 5\n"));
  ASSERT_TRUE(t);
  EXPECT_EQ(render(*t), std::vector<std::string>{"worker/pseudo;main/unknown; 5"});
}

TEST_F(ReadProfile, ReadsPerfScriptTextWhateverItsIndentation) {
  for (std::string indent : {"\t    ", "    ", "  \t", ""}) {
    SCOPED_TRACE("indent '" + indent + "'");
    std::string text = "app 7/7 1.000001: 1000 cpu-clock: \n" + indent + "10 leaf (/bin/app)\n" +
                       indent + "20 main (/bin/app)\n\n";
    auto a = gp::ingest::read_profile(write("perf.txt", text));
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_FALSE(a->truncated) << a->problem;
    EXPECT_EQ(render(*a), std::vector<std::string>{"app/pseudo;main/native;leaf/native; 1"});
  }
}

TEST_F(ReadProfile, SaysWhichPerfScriptLinesItSkipped) {
  auto a =
      gp::ingest::read_profile(write("cut.txt",
                                     "app 7/7 1.000001: 1000 cpu-clock: \n\t10 leaf (/bin/app)\n\n"
                                     "garbled line\n"));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->truncated);
  EXPECT_NE(a->problem.find("skipped 1 line(s)"), std::string::npos) << a->problem;
  EXPECT_NE(a->problem.find("first: line 4"), std::string::npos) << a->problem;
}

TEST_F(ReadProfile, ReportsMissingEmptyAndUnknownInputs) {
  auto missing = gp::ingest::read_profile("/nonexistent/x.col");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "cannot open '/nonexistent/x.col': No such file or directory");
  auto empty = gp::ingest::read_profile(write("empty", ""));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("is empty"), std::string::npos);
  auto prose = gp::ingest::read_profile(write("prose", "just some words\n"));
  ASSERT_FALSE(prose);
  EXPECT_NE(prose.error().message.find("is not a profile"), std::string::npos);
}

}  // namespace
}  // namespace gp::test::ingest

namespace gp::test::ingest {
namespace {

// Any text gives sessions or an error, never a crash (run under ASan in CI builds).
TEST(CollapsedReader, SurvivesMutatedInput) {
  std::string seed =
      std::string(kColHeader) + "\n1;web;python;appid: x;main_[p] 3\n0;;swapper;idle_[k] 2";
  uint32_t state = 777;
  auto next = [&] { return state = state * 1103515245u + 12345u; };
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    for (int e = 0; e < 3; ++e) {
      size_t at = next() % (s.size() + 1);
      const char alphabet[] = {';', ' ', '\n', '#', '0', '9', '[', ']', '_', '\0', '"', '{'};
      if (next() % 2) s.insert(at, 1, alphabet[next() % sizeof alphabet]);
      else if (at < s.size()) s.erase(at, 1);
    }
    auto a = parse_collapsed(s);
    if (a) fold::fold_stacks(*a, {});
  }
}

}  // namespace
}  // namespace gp::test::ingest
