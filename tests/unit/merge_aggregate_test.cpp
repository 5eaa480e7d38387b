// gp-merge default (sessions kept) and --aggregate (one session, hosts' pids kept apart).

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gp::test::merge_aggregate
