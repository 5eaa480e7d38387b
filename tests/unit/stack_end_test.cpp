// Stack ends (model::StackEnd, archive Stack.end) from producer to output: the builder and the
// recorder's assembler tell stacks apart by their end, the archive keeps it, gp-merge's copies
// keep it, text inputs read gp-fold's marker back, and every output shows a truncated stack
// under "[truncated]" at its root (or not, when asked). The checked-in fixture behind the CLI
// tests is checked against its generator here.
//
// Regenerate the fixture (deliberately, then review the diff):
//   GP_UPDATE_GOLDEN=1 build/bin/gp_unit_tests --gtest_filter='StackEndFixture.*'

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/fold/col.h"
#include "gp/fold/folded.h"
#include "gp/fold/speedscope.h"
#include "gp/fold/stacks.h"
#include "gp/fold/top.h"
#include "gp/ingest/collapsed.h"
#include "gp/merge/merge.h"
#include "merge_fixture.h"
#include "stack_end_fixture.h"

namespace gp::test::stack_end {
namespace {

using model::StackEnd;

const std::string kFixture = std::string(GP_TEST_DATA_DIR) + "/fixtures/archives/stack-ends.gpa";

std::string folded(const model::Archive& a, fold::StackOptions so = {},
                   fold::FoldedOptions fo = {}) {
  std::ostringstream out;
  fold::write_folded(a, so, fo, out);
  return out.str();
}

std::string col_body(const model::Archive& a, fold::ColOptions o = {}) {
  std::ostringstream out;
  EXPECT_TRUE(fold::write_col(a, o, out));
  std::string text = out.str();
  return text.substr(text.find('\n') + 1);
}

std::string roundtrip_bytes(const model::Archive& a) {
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, false);
  model::Archive copy = a;
  EXPECT_TRUE(archive::write_archive(*out, copy));
  EXPECT_TRUE(out->close());
  return bytes;
}

model::Archive read_bytes(const std::string& bytes) {
  auto in = archive::InputStream::from_memory(bytes);
  auto a = archive::read_archive(*in);
  EXPECT_TRUE(a.ok()) << a.error().message;
  return a.ok() ? std::move(*a) : model::Archive{};
}

std::vector<StackEnd> ends(const model::Session& s) {
  std::vector<StackEnd> out;
  for (const model::Stack& st : s.stacks) out.push_back(st.end);
  return out;
}

TEST(SessionBuilder, StacksWithTheSameFramesAndAnotherEndAreAnotherStack) {
  model::Session s;
  model::SessionBuilder b(s);
  uint64_t f = b.symbolic_location(model::FrameKind::native, b.function("f"));
  uint64_t g = b.symbolic_location(model::FrameKind::native, b.function("g"));
  uint64_t unknown = b.stack({f, g});
  uint64_t complete = b.stack({f, g}, StackEnd::complete);
  uint64_t truncated = b.stack({f, g}, StackEnd::truncated);
  EXPECT_NE(unknown, complete);
  EXPECT_NE(unknown, truncated);
  EXPECT_NE(complete, truncated);
  EXPECT_EQ(b.stack({f, g}, StackEnd::truncated), truncated);
  EXPECT_EQ(b.stack({f, g}, StackEnd::unknown), unknown);
  ASSERT_EQ(s.stacks.size(), 3u);
  EXPECT_EQ(s.stack(truncated).end, StackEnd::truncated);
  EXPECT_EQ(s.stack(complete).end, StackEnd::complete);
  EXPECT_EQ(s.stack(unknown).end, StackEnd::unknown);
  // A truncated empty stack is not the stack of one frame whose id's bytes look alike.
  EXPECT_NE(b.stack({}, StackEnd::truncated), b.stack({}));
}

TEST(ArchiveStackEnd, EveryEndSurvivesWritingAndReading) {
  model::Archive a = stack_end_fixture::archive();
  model::Archive back = read_bytes(roundtrip_bytes(a));
  ASSERT_EQ(back.sessions.size(), 1u);
  EXPECT_EQ(ends(back.sessions[0]), ends(a.sessions[0]));
  EXPECT_EQ(ends(back.sessions[0]),
            (std::vector<StackEnd>{StackEnd::complete, StackEnd::unknown, StackEnd::truncated,
                                   StackEnd::truncated, StackEnd::truncated}));
}

TEST(FoldStackEnd, FoldedShowsTheMarkerAfterTheCommOfTruncatedStacksOnly) {
  EXPECT_EQ(folded(stack_end_fixture::archive()),
            "app;[truncated];(/opt/app/bin/app);(/opt/app/bin/app) 1\n"
            "app;[truncated];deep;deep;spin 3\n"
            "app;[truncated];deep;spin;read 2\n"
            "app;main;loop;spin 7\n");
}

TEST(FoldStackEnd, TheSwitchHidesTheMarker) {
  fold::StackOptions so;
  so.truncated_marker = false;
  EXPECT_EQ(folded(stack_end_fixture::archive(), so),
            "app;(/opt/app/bin/app);(/opt/app/bin/app) 1\n"
            "app;deep;deep;spin 3\n"
            "app;deep;spin;read 2\n"
            "app;main;loop;spin 7\n");
}

TEST(FoldStackEnd, UserOnlyKeepsTheMarkerAndKernelOnlyHasNone) {
  fold::StackOptions user;
  user.user_only = true;
  EXPECT_NE(folded(stack_end_fixture::archive(), user).find("app;[truncated];deep;spin 2\n"),
            std::string::npos);
  fold::StackOptions kernel;
  kernel.kernel_only = true;
  EXPECT_EQ(folded(stack_end_fixture::archive(), kernel), "app;read 2\n");
}

TEST(FoldStackEnd, KernelDelimiterStaysBetweenUserAndKernelFrames) {
  fold::FoldedOptions fo;
  fo.kernel_delimiter = true;
  fo.annotate = true;
  EXPECT_NE(
      folded(stack_end_fixture::archive(), {}, fo).find("app;[truncated];deep;spin;-;read_[k] 2\n"),
      std::string::npos);
}

TEST(FoldStackEnd, ColPutsTheMarkerAfterThePrefixFrames) {
  EXPECT_EQ(col_body(stack_end_fixture::archive()),
            "0;;app;[truncated];(/opt/app/bin/app);(/opt/app/bin/app) 1\n"
            "0;;app;[truncated];deep;deep;spin 3\n"
            "0;;app;[truncated];deep;spin;read_[k] 2\n"
            "0;;app;main;loop;spin 7");
  fold::ColOptions hidden;
  hidden.truncated_marker = false;
  EXPECT_EQ(col_body(stack_end_fixture::archive(), hidden).find("[truncated]"), std::string::npos);
}

TEST(FoldStackEnd, TheMarkerComesAfterAnErrorFrame) {
  model::Archive a = stack_end_fixture::archive();
  model::Process p = a.sessions[0].processes[0];
  p.error_frame = "[Profiling error: exception]";
  a.sessions[0].processes.push_back(p);
  EXPECT_NE(col_body(a).find("0;;app;[Profiling error: exception];[truncated];deep;deep;spin 3\n"),
            std::string::npos);
}

TEST(FoldStackEnd, FoldStacksAndSpeedscopeAndTopSeeTheMarker) {
  model::Archive a = stack_end_fixture::archive();
  auto stacks = fold::fold_stacks(a, {});
  ASSERT_EQ(stacks.size(), 4u);
  ASSERT_GE(stacks[1].frames.size(), 3u);
  EXPECT_EQ(stacks[1].frames[0].name, "app");
  EXPECT_EQ(stacks[1].frames[1].name, "[truncated]");
  EXPECT_EQ(stacks[1].frames[1].kind, model::FrameKind::pseudo);
  EXPECT_EQ(stacks[1].frames[2].name, "deep");

  std::ostringstream speedscope;
  ASSERT_TRUE(fold::write_speedscope(stacks, "t", speedscope));
  EXPECT_NE(speedscope.str().find("{\"name\":\"[truncated]\"}"), std::string::npos)
      << speedscope.str();

  fold::StackOptions no_comm;
  no_comm.process_frame = false;
  auto table = fold::top_frames(fold::fold_stacks(a, no_comm), 10);
  bool found = false;
  for (const auto& row : table.rows) {
    if (row.frame != "[truncated]") continue;
    found = true;
    EXPECT_EQ(row.self, 0u);
    EXPECT_EQ(row.total, 6u);
  }
  EXPECT_TRUE(found);
}

TEST(FoldStackEnd, CountsTruncatedSamples) {
  EXPECT_EQ(fold::truncated_samples(stack_end_fixture::archive()), 6u);
  EXPECT_EQ(fold::truncated_samples(merge_fixture::archive_of(model::Session{})), 0u);
}

TEST(CollapsedStackEnd, GpFoldsMarkerReadsBackAsTheStacksEnd) {
  model::Archive a = stack_end_fixture::archive();
  std::ostringstream col;
  ASSERT_TRUE(fold::write_col(a, {}, col));
  auto back = ingest::parse_collapsed(col.str());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(fold::truncated_samples(*back), 6u);
  // Folding the text again gives the same lines, with or without the marker.
  EXPECT_EQ(col_body(*back), col_body(a));
  fold::ColOptions hidden;
  hidden.truncated_marker = false;
  EXPECT_EQ(col_body(*back, hidden), col_body(a, hidden));
  // Plain folded text too.
  auto from_folded = ingest::parse_collapsed(folded(a));
  ASSERT_TRUE(from_folded.ok());
  EXPECT_EQ(folded(*from_folded), folded(a));
}

TEST(CollapsedStackEnd, AMarkerElsewhereIsAFrame) {
  auto a = ingest::parse_collapsed("app;main;[truncated] 1\napp;[truncated] 2\n");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(fold::truncated_samples(*a), 0u);
  for (const model::Stack& st : a->sessions[0].stacks) EXPECT_EQ(st.end, StackEnd::unknown);
}

TEST(MergeStackEnd, AggregateKeepsEveryEnd) {
  merge::MergeOptions o;
  o.aggregate = true;
  std::vector<model::Archive> inputs;
  inputs.push_back(stack_end_fixture::archive());
  auto merged = merge::merge_archives(std::move(inputs), o);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(fold::truncated_samples(*merged), 6u);
  EXPECT_EQ(folded(*merged), folded(stack_end_fixture::archive()));
  model::Archive back = read_bytes(roundtrip_bytes(*merged));
  EXPECT_EQ(folded(back), folded(stack_end_fixture::archive()));
}

TEST(MergeStackEnd, RuntimeStacksReplacingNativeOnesHaveNoEnd) {
  model::Session sys = stack_end_fixture::session();
  sys.header.session_id = "sys";
  model::Session rt = merge_fixture::session(model::SourceKind::runtime, "host-1");
  model::SessionBuilder b(rt);
  b.process(merge_fixture::process(100, "app"));
  merge_fixture::add(b, 100, "main_[p];work_[p]", 4);
  std::vector<model::Archive> inputs;
  inputs.push_back(merge_fixture::archive_of(std::move(sys)));
  inputs.push_back(merge_fixture::archive_of(std::move(rt)));
  merge::MergeStats stats;
  auto merged = merge::merge_archives(std::move(inputs), {}, &stats);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(stats.runtime_pids_replaced, 1u);
  EXPECT_EQ(fold::truncated_samples(*merged), 0u);
  EXPECT_EQ(folded(*merged), "app;main;work 13\n");
}

TEST(MergeStackEnd, SmartKeepsTheEndsOfTheDwarfStacksItTakes) {
  model::Session fp = merge_fixture::session(model::SourceKind::system, "h1", "fp");
  {
    model::SessionBuilder b(fp);
    b.process(merge_fixture::process(100, "app"));
    merge_fixture::add(b, 100, "spin", 10);
  }
  model::Session dwarf = stack_end_fixture::session();
  dwarf.header.host.hostname = "h1";
  dwarf.header.session_id = "h1-dwarf";
  dwarf.header.sampling.mode = "dwarf";
  std::vector<model::Archive> inputs;
  inputs.push_back(merge_fixture::archive_of(std::move(fp)));
  inputs.push_back(merge_fixture::archive_of(std::move(dwarf)));
  merge::MergeOptions o;
  o.smart = true;
  merge::MergeStats stats;
  auto merged = merge::merge_archives(std::move(inputs), o, &stats);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(stats.smart_pids_dwarf, 1u);
  EXPECT_GT(fold::truncated_samples(*merged), 0u);
  EXPECT_NE(folded(*merged).find("app;[truncated];deep;deep;spin "), std::string::npos)
      << folded(*merged);
}

// The checked-in fixture must stay what the generator makes (or be regenerated on purpose).
TEST(StackEndFixture, CheckedInArchiveMatchesItsGenerator) {
  model::Archive a = stack_end_fixture::archive();
  const char* update = std::getenv("GP_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    auto out = archive::OutputStream::open(kFixture, false);
    ASSERT_TRUE(out);
    model::Archive copy = a;
    ASSERT_TRUE(archive::write_archive(**out, copy));
    ASSERT_TRUE((*out)->close());
  }
  auto read = archive::read_archive(kFixture);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->truncated);
  ASSERT_EQ(read->sessions.size(), 1u);
  EXPECT_EQ(ends(read->sessions[0]), ends(a.sessions[0]));
  EXPECT_EQ(folded(*read), folded(a));
}

}  // namespace
}  // namespace gp::test::stack_end
