// fold formats: the .col writer (exact header and lines), folded switches, filters, top, and
// the checked-in fixture archive behind the CLI tests.
//
// Regenerate the fixture (deliberately, then review the diff):
//   GP_UPDATE_GOLDEN=1 build/bin/gp_unit_tests --gtest_filter='FoldFixture.*'

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fold_fixture.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/fold/col.h"
#include "gp/fold/filter.h"
#include "gp/fold/folded.h"
#include "gp/fold/top.h"
#include "gp/ingest/collapsed.h"

namespace gp::test::fold {
namespace {

using gp::fold::ColOptions;
using gp::fold::FoldedOptions;

std::string col(const model::Archive& a, const ColOptions& o = {}) {
  std::ostringstream out;
  auto st = gp::fold::write_col(a, o, out);
  EXPECT_TRUE(st);
  return out.str();
}

std::string body(const std::string& text) { return text.substr(text.find('\n') + 1); }

std::string folded(const model::Archive& a, const gp::fold::StackOptions& so,
                   const FoldedOptions& fo) {
  std::ostringstream out;
  gp::fold::write_folded(a, so, fo, out);
  return out.str();
}

const char* kFixtureHeader =
    R"J(# {"containers": ["web"], "container_names_enabled": true, "metadata": {"cloud_provider": "unknown", )J"
    R"J("memory_capacity_mb": 7940, "run_arguments": {"frequency": 99, "profile_api_version": "v2"}, )J"
    R"J("agent_version": "0.1.0", "spawn_time": "2023-11-14T22:13:20", "python_version": "unknown", )J"
    R"J("run_mode": "standalone_executable", "deployment_type": "instances", "kernel_release": "6.1.0-18-amd64", )J"
    R"J("kernel_version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)", "system_name": "Linux", )J"
    R"J("processors": 4, "hostname": "web-1", "os_name": "Debian GNU/Linux", "os_release": "12", )J"
    R"J("hardware_type": "x86_64", "libc_type": "unknown", "libc_version": "unknown", "mac_address": "unknown", )J"
    R"J("private_ip": "unknown", "spawn_uptime_ms": 1218241.6, "current_time": "2023-11-14T22:13:30", )J"
    R"J("profiling_mode": "cpu", "sampling_event": "cpu-time", "sampling_mode": "frequency", "sampling_frequency": 99}, )J"
    R"J("metrics": {"cpu_avg": null, "mem_avg": null}, "application_metadata": [null, {"exe": "/usr/bin/python3.11", )J"
    R"J("python_version": "Python 3.11.2", "arch": "x86_64"}], "application_metadata_enabled": true, )J"
    R"J("profiling_mode": "cpu", "hwmetrics": null, "htmlblob": null, "flamegraph_html": null, )J"
    R"J("sampling_event": "cpu-time", "sampling_mode": "frequency", "sampling_frequency": 99})J";

const char* kFixtureLines =
    "0;;java;[Profiling skipped: profiled-oom];Fib.main([Ljava/lang/String|)V_[j] 2\n"
    "0;;server;main;serve_[i];(/usr/bin/server) 5\n"
    "0;;server;main;serve_[i];(/usr/bin/server);ksys_read_[k];[unknown]_[k] 7\n"
    "0;;swapper/0;do_idle_[k] 40\n"
    "1;web;python3;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p] 4\n"
    "1;web;python3;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p];"
    "Worker.run|step (/srv/app.py:20)_[p] 12";

TEST(ColWriter, WritesGprofilerHeaderAndSortedLinesExactly) {
  EXPECT_EQ(col(fold_fixture::archive()), std::string(kFixtureHeader) + "\n" + kFixtureLines);
}

TEST(ColWriter, ApiV1DropsIndexAndContainerFrames) {
  ColOptions o;
  o.profile_api_version = "v1";
  std::string text = col(fold_fixture::archive(), o);
  EXPECT_NE(text.find(R"("profile_api_version": "v1")"), std::string::npos);
  EXPECT_EQ(body(text),
            "java;[Profiling skipped: profiled-oom];Fib.main([Ljava/lang/String|)V_[j] 2\n"
            "python3;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p] 4\n"
            "python3;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p];"
            "Worker.run|step (/srv/app.py:20)_[p] 12\n"
            "server;main;serve_[i];(/usr/bin/server) 5\n"
            "server;main;serve_[i];(/usr/bin/server);ksys_read_[k];[unknown]_[k] 7\n"
            "swapper/0;do_idle_[k] 40");
}

TEST(ColWriter, WithoutAppMetadataHasNoIndexFrame) {
  ColOptions o;
  o.application_metadata = false;
  std::string text = col(fold_fixture::archive(), o);
  EXPECT_NE(text.find(R"("application_metadata": [null], "application_metadata_enabled": false)"),
            std::string::npos);
  EXPECT_EQ(body(text).substr(0, 10), ";java;[Pro");  // container, then comm
}

TEST(ColWriter, NeverWritesATokenAndFillsOnlyKnownFields) {
  model::Archive a;
  a.sessions.emplace_back().header.metadata_json =
      R"({"run_arguments": {"server_token": "x", "Token": "y"}, "api_token": "z"})";
  std::string text = col(a);
  EXPECT_EQ(text.find("token"), std::string::npos);
  EXPECT_EQ(text.find("Token"), std::string::npos);
  for (const char* unknown :
       {"spawn_time", "current_time", "processors", "spawn_uptime_ms", "\"pid\""})
    EXPECT_EQ(text.find(unknown), std::string::npos) << unknown;
  EXPECT_EQ(text.back(), '}');  // header only, no trailing newline
}

// Lines are summed by their text: an error frame spelled like a stack's first frame, and two
// names that escape alike ("a;b", "a|b"), make one line each, as gProfiler's readers see them.
TEST(ColWriter, SumsLinesThatSpellTheSame) {
  model::Archive a;
  model::Session& s = a.sessions.emplace_back();
  model::SessionBuilder b(s);
  model::Process failed;
  failed.pid = 10;
  failed.comm = "app";
  failed.error_frame = "E";
  b.process(failed);
  model::Process plain;
  plain.pid = 11;
  plain.comm = "app";
  b.process(plain);
  using model::FrameKind;
  uint64_t f = b.symbolic_location(FrameKind::native, b.function("f"));
  uint64_t e = b.symbolic_location(FrameKind::native, b.function("E"));
  uint64_t semi = b.symbolic_location(FrameKind::native, b.function("a;b"));
  uint64_t bar = b.symbolic_location(FrameKind::native, b.function("a|b"));
  b.add_sample(10, 10, b.stack({f}), 2);
  b.add_sample(11, 11, b.stack({f, e}), 3);
  b.add_sample(10, 12, b.stack({semi}), 1);
  b.add_sample(11, 11, b.stack({bar, e}), 4);
  EXPECT_EQ(body(col(a)), "0;;app;E;a|b 5\n0;;app;E;f 5");
}

TEST(ColWriter, RoundTripsThroughTheColReader) {
  std::string first = col(fold_fixture::archive());
  auto again = gp::ingest::parse_collapsed(first, "x.col");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again->truncated) << again->problem;
  EXPECT_EQ(col(*again), first);
}

TEST(FoldedWriter, WritesPlainSortedLinesWithTrailingNewline) {
  EXPECT_EQ(folded(fold_fixture::archive(), {}, {}),
            "java;[Profiling skipped: profiled-oom];Fib.main([Ljava/lang/String|)V 2\n"
            "python3;main (/srv/app.py:10) 4\n"
            "python3;main (/srv/app.py:10);Worker.run|step (/srv/app.py:20) 12\n"
            "server;main;serve;(/usr/bin/server) 5\n"
            "server;main;serve;(/usr/bin/server);ksys_read;[unknown] 7\n"
            "swapper/0;do_idle 40\n");
}

TEST(FoldedWriter, AnnotatesAndDelimitsKernelFrames) {
  FoldedOptions fo;
  fo.annotate = true;
  fo.kernel_delimiter = true;
  std::string text = folded(fold_fixture::archive(), {}, fo);
  EXPECT_NE(
      text.find("\nserver;main;serve_[i];(/usr/bin/server);-;ksys_read_[k];[unknown]_[k] 7\n"),
      std::string::npos);
  EXPECT_NE(text.find("\nswapper/0;do_idle_[k] 40\n"), std::string::npos);  // no user part, no "-"
}

TEST(FoldedWriter, PerThreadProcessFramesAndIdleExclusion) {
  gp::fold::StackOptions so;
  so.with_tid = true;
  so.include_idle = false;
  std::string text = folded(fold_fixture::archive(), so, {});
  EXPECT_NE(text.find("python3-200/200;main (/srv/app.py:10) 1\n"), std::string::npos);
  EXPECT_NE(text.find("python3-200/201;main (/srv/app.py:10) 3\n"), std::string::npos);
  EXPECT_EQ(text.find("swapper"), std::string::npos);
}

TEST(SampleFilter, KeepsMatchingPidsCommsAndContainers) {
  model::Archive a = fold_fixture::archive();
  gp::fold::SampleFilter f;
  f.containers = {"web"};
  EXPECT_EQ(gp::fold::filter_samples(a, f), 16u);
  a = fold_fixture::archive();
  f = {};
  f.containers = {"aaaaaaaaaaaa"};  // id prefix; the second session's process has no id
  EXPECT_EQ(gp::fold::filter_samples(a, f), 15u);
  a = fold_fixture::archive();
  f = {};
  f.pids = {300, 400};
  f.comms = {"server"};
  EXPECT_EQ(gp::fold::filter_samples(a, f), 12u);
  EXPECT_EQ(folded(a, {}, {}),
            "server;main;serve;(/usr/bin/server) 5\n"
            "server;main;serve;(/usr/bin/server);ksys_read;[unknown] 7\n");
  a = fold_fixture::archive();
  f = {};
  f.exclude_idle = true;
  EXPECT_EQ(gp::fold::filter_samples(a, f), 30u);
}

TEST(Top, RanksBySelfThenTotal) {
  gp::fold::StackOptions so;
  so.process_frame = false;
  auto table = gp::fold::top_frames(gp::fold::fold_stacks(fold_fixture::archive(), so), 3);
  EXPECT_EQ(table.samples, 70u);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0].frame, "do_idle_[k]");
  EXPECT_EQ(table.rows[0].self, 40u);
  EXPECT_EQ(table.rows[1].frame, "Worker.run;step (/srv/app.py:20)_[p]");
  EXPECT_EQ(table.rows[2].frame, "[unknown]_[k]");
  std::ostringstream out;
  gp::fold::write_top(table, out);
  EXPECT_EQ(out.str().substr(0, out.str().find('\n', 50)),
            "        SELF   SELF%        TOTAL  TOTAL%  FRAME\n"
            "          40   57.1%           40   57.1%  do_idle_[k]");
}

// The checked-in fixture must stay what the generator makes (or be regenerated on purpose).
TEST(FoldFixture, CheckedInArchiveMatchesItsGenerator) {
  const std::string path = std::string(GP_TEST_DATA_DIR) + "/fixtures/archives/fold-basic.gpa";
  model::Archive a = fold_fixture::archive();
  const char* update = std::getenv("GP_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    auto out = archive::OutputStream::open(path, false);
    ASSERT_TRUE(out);
    model::Archive copy = a;
    ASSERT_TRUE(archive::write_archive(**out, copy));
    ASSERT_TRUE((*out)->close());
  }
  auto read = archive::read_archive(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->truncated);
  EXPECT_EQ(col(*read), col(a));
}

}  // namespace
}  // namespace gp::test::fold
