// gp-merge default (sessions kept) and --aggregate (one session, hosts' pids kept apart).

#include <gtest/gtest.h>

#include "archive.capnp.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/merge/merge.h"
#include "gp/util/json.h"
#include "merge_fixture.h"

namespace gp::test::merge_aggregate {
namespace {

using namespace merge_fixture;
using model::SourceKind;
using Lines = std::vector<std::string>;

model::Session host(const std::string& name, const std::string& comm, uint64_t n) {
  model::Session s = session(SourceKind::system, name);
  s.header.metadata_json = R"({"hostname": ")" + name + R"("})";
  model::SessionBuilder b(s);
  b.process(process(100, comm));
  add(b, 100, "main;work", n);
  add(b, 0, "cpu_idle_[k]", 1);
  return s;
}

TEST(MergeAggregate, DefaultKeepsSessionsSortedByHost) {
  auto out = gp::merge::merge_archives(
      {archive_of(host("b", "nginx", 3)), archive_of(host("a", "redis", 2))}, {});
  ASSERT_TRUE(out);
  ASSERT_EQ(out->sessions.size(), 2u);
  EXPECT_EQ(out->sessions[0].header.host.hostname, "a");
  EXPECT_EQ(out->sessions[1].header.host.hostname, "b");
}

TEST(MergeAggregate, HostsPidsKeptApartCountsSummed) {
  gp::merge::MergeStats stats;
  auto out = gp::merge::merge_archives(
      {archive_of(host("b", "nginx", 3)), archive_of(host("a", "redis", 2)),
       archive_of(host("a", "redis", 4))},
      {.aggregate = true}, &stats);
  ASSERT_TRUE(out);
  ASSERT_EQ(out->sessions.size(), 1u);
  const model::Session& s = out->sessions[0];
  EXPECT_EQ(s.header.source, SourceKind::merged);
  EXPECT_EQ(s.header.host.hostname, "");  // several hosts
  EXPECT_EQ(stats.pids_renumbered, 1u);   // b's pid 100
  EXPECT_EQ(folded(*out),
            (Lines{"nginx;main;work 3", "redis;main;work 6", "swapper;cpu_idle_[k] 3"}));
  EXPECT_EQ(s.find_process(100)->comm, "redis");
  EXPECT_EQ(s.find_process(4194304)->comm, "nginx");
  auto meta = json::parse(s.header.metadata_json);
  ASSERT_TRUE(meta);
  const json::Value* hosts = meta->find("hosts");
  ASSERT_NE(hosts, nullptr);
  EXPECT_EQ(hosts->items.size(), 3u);
  EXPECT_EQ(json::dump(*meta->find("renumbered_pids")),
            R"([{"hostname": "b", "pid": 100, "as": 4194304}])");
  EXPECT_NE(json::dump(*hosts).find(R"("metadata": {"hostname": "a"})"), std::string::npos);
}

TEST(MergeAggregate, InputOrderChangesNothing) {
  auto one = gp::merge::merge_archives(
      {archive_of(host("a", "redis", 2)), archive_of(host("b", "nginx", 3))}, {.aggregate = true});
  auto two = gp::merge::merge_archives(
      {archive_of(host("b", "nginx", 3)), archive_of(host("a", "redis", 2))}, {.aggregate = true});
  ASSERT_TRUE(one && two);
  EXPECT_EQ(folded(*one), folded(*two));
  EXPECT_EQ(one->sessions[0].header.metadata_json, two->sessions[0].header.metadata_json);
  EXPECT_EQ(one->sessions[0].samples.size(), two->sessions[0].samples.size());
}

TEST(MergeAggregate, SameHostKeepsPidsAndHost) {
  auto out = gp::merge::merge_archives(
      {archive_of(host("a", "redis", 2)), archive_of(host("a", "redis", 5))}, {.aggregate = true});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->sessions[0].header.host.hostname, "a");
  EXPECT_EQ(total(*out, 100), 7u);
  // Tables were re-interned: one function per name.
  EXPECT_EQ(out->sessions[0].functions.size(), 3u);
}

// Archives of different format minors (the checked-in 1.0, 1.1 and 1.2 fixtures) merge into
// one archive of today's version that keeps 1.2's fields (Sample.comm, Function.package) and
// 1.1's (Stack.end): it folds as the inputs fold together, in both modes.
TEST(MergeAggregate, ArchivesOfDifferentMinorsKeepTheNewFields) {
  const std::string dir = std::string(GP_TEST_DATA_DIR) + "/fixtures/archives/";
  model::Archive all;
  std::vector<model::Archive> inputs;
  for (const char* v : {"1.0", "1.1", "1.2"}) {
    auto a = archive::read_archive(dir + "format-" + v + ".gpa");
    ASSERT_TRUE(a) << v << ": " << a.error().message;
    for (const auto& s : a->sessions) all.sessions.push_back(s);
    inputs.push_back(std::move(*a));
  }
  const Lines expected = folded(all);
  for (bool aggregate : {false, true}) {
    auto merged = gp::merge::merge_archives(inputs, {.aggregate = aggregate});
    ASSERT_TRUE(merged) << merged.error().message;
    std::string bytes;
    auto out = archive::OutputStream::to_string(&bytes, false);
    ASSERT_TRUE(archive::write_archive(*out, *merged));
    ASSERT_TRUE(out->close());
    auto in = archive::InputStream::from_memory(bytes);
    auto back = archive::read_archive(*in);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(folded(*back), expected) << "aggregate=" << aggregate;
    uint64_t gunicorn = 0, named_python3 = 0, flask = 0;
    for (const auto& s : back->sessions) {
      EXPECT_EQ(s.header.format_minor, schema::FORMAT_MINOR);
      for (const auto& smp : s.samples) {
        if (smp.comm == "gunicorn") gunicorn += smp.count;
        if (smp.comm == "python3") named_python3 += smp.count;
      }
      for (const auto& f : s.functions) flask += f.package == "flask==3.0.0";
    }
    // Both 1.2 sessions: 7 + 7 samples named before the exec, 2 + 2 under the new name.
    EXPECT_EQ(gunicorn, 14u) << "aggregate=" << aggregate;
    EXPECT_EQ(named_python3, 4u) << "aggregate=" << aggregate;
    EXPECT_GE(flask, 1u) << "aggregate=" << aggregate;
  }
}

}  // namespace
}  // namespace gp::test::merge_aggregate
