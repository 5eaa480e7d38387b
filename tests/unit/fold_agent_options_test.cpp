// What gProfiler's agent options change in a .col: the --external-metadata file (parsing, the
// header and the app-metadata indices), --disable-container-names and
// --disable-metadata-collection, on the fold fixture (python3 pid 200 in container "web" with
// metadata, server pid 300 without).
#include <gtest/gtest.h>

#include <sstream>

#include "fold_fixture.h"
#include "gp/fold/col.h"
#include "gp/fold/external_metadata.h"
#include "gp/util/json.h"

namespace gp::test::fold {
namespace {

using gp::fold::ExternalMetadata;

std::string col_of(const model::Archive& a, const gp::fold::ColOptions& o) {
  std::ostringstream out;
  EXPECT_TRUE(gp::fold::write_col(a, o, out));
  return out.str();
}

json::Value header_of(const std::string& col) {
  auto h = json::parse(col.substr(2, col.find('\n') - 2));
  EXPECT_TRUE(h);
  return h ? *h : json::Value();
}

// The app-metadata dict that a line starting with `prefix` (after its index) points at.
json::Value metadata_of_line(const std::string& col, const std::string& prefix) {
  json::Value list = *header_of(col).find("application_metadata");
  std::istringstream lines(col.substr(col.find('\n') + 1));
  for (std::string line; std::getline(lines, line);) {
    size_t semi = line.find(';');
    if (line.compare(semi + 1, prefix.size(), prefix) != 0) continue;
    return list.items.at(std::stoul(line.substr(0, semi)));
  }
  ADD_FAILURE() << "no line " << prefix;
  return {};
}

TEST(ExternalMetadata, ParsesBothPartsAndNeither) {
  auto e = gp::fold::parse_external_metadata(
      R"({"static": {"team": "infra"}, "application": {"200": {"owner": "a"}}})");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(json::dump(e->static_part), R"({"team": "infra"})");
  ASSERT_EQ(e->by_pid.size(), 1u);
  EXPECT_EQ(json::dump(e->by_pid.at(200)), R"({"owner": "a"})");
  auto empty = gp::fold::parse_external_metadata("{}");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->static_part.is_object() && empty->static_part.members.empty());
  EXPECT_TRUE(empty->by_pid.empty());
}

TEST(ExternalMetadata, RefusesWhatIsNotTheFormatNamingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"{", "not JSON"},
      {"[]", "not a JSON object"},
      {R"({"static": 3})", "\"static\" is not an object"},
      {R"({"application": []})", "\"application\" is not an object"},
      {R"({"application": {"web": {}}})", "key \"web\" is not a pid"},
      {R"({"application": {"-4": {}}})", "key \"-4\" is not a pid"},
      {R"({"application": {"12": "x"}})", "entry of pid 12 is not an object"},
  };
  for (const auto& [text, why] : cases) {
    auto e = gp::fold::parse_external_metadata(text);
    ASSERT_FALSE(e) << text;
    EXPECT_NE(e.error().message.find(why), std::string::npos) << text << ": " << e.error().message;
  }
}

TEST(ExternalMetadata, StaticGoesInTheHeaderAndEntriesOverrideCollectedKeys) {
  auto e = gp::fold::parse_external_metadata(
      R"({"static": {"team": "infra"}, "application": {"200": {"python_version": "from file",)"
      R"( "owner": "a"}, "300": {"tier": "gold"}, "999": {"never": "seen"}}})");
  ASSERT_TRUE(e);
  model::Archive a = fold_fixture::archive();
  gp::fold::apply_external_app_metadata(a, *e);
  gp::fold::ColOptions o;
  o.external_metadata = e->static_part;
  std::string col = col_of(a, o);
  json::Value header = header_of(col);
  EXPECT_EQ(json::dump(*header.find("metadata")->find("external_metadata")),
            R"({"team": "infra"})");
  // pid 200's collected dict, its python_version replaced by the file's, owner added.
  json::Value py = metadata_of_line(col, "web;python3;");
  EXPECT_EQ(py.get_string("python_version"), "from file");
  EXPECT_EQ(py.get_string("exe"), "/usr/bin/python3.11");
  EXPECT_EQ(py.get_string("owner"), "a");
  // pid 300 had none: it gets the file's entry alone, and its lines a non-zero index.
  EXPECT_EQ(json::dump(metadata_of_line(col, ";server;")), R"({"tier": "gold"})");
  EXPECT_EQ(col.find("never"), std::string::npos);
}

TEST(ExternalMetadata, WithoutTheFileTheHeaderKeepsWhatWasRecorded) {
  std::string col = col_of(fold_fixture::archive(), {});
  EXPECT_EQ(header_of(col).find("metadata")->find("external_metadata"), nullptr);
  EXPECT_TRUE(metadata_of_line(col, ";server;").is_null());
}

}  // namespace
}  // namespace gp::test::fold

namespace gp::test::fold {
namespace {

// gProfiler's --disable-container-names and --disable-metadata-collection, on the same fixture
// (python3 runs in container "web").
TEST(ColSwitches, WithoutContainerNamesTheFrameIsEmptyAndTheHeaderSaysSo) {
  gp::fold::ColOptions o;
  std::string with = col_of(fold_fixture::archive(), o);
  ASSERT_NE(with.find(";web;python3;"), std::string::npos);
  o.container_names = false;
  std::string col = col_of(fold_fixture::archive(), o);
  json::Value header = header_of(col);
  EXPECT_EQ(json::dump(*header.find("containers")), "[]");
  EXPECT_EQ(json::dump(*header.find("container_names_enabled")), "false");
  EXPECT_EQ(col.find(";web;"), std::string::npos);
  EXPECT_NE(col.find(";;python3;"), std::string::npos);
}

TEST(ColSwitches, WithoutMetadataCollectionOnlyHostModeAndSamplingRemain) {
  gp::fold::ColOptions o;
  o.metadata_collection = false;
  json::Value md = *header_of(col_of(fold_fixture::archive(), o)).find("metadata");
  std::vector<std::string> keys;
  for (const auto& [key, value] : md.members) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"hostname", "profiling_mode", "sampling_event",
                                            "sampling_mode", "sampling_frequency"}));
  EXPECT_EQ(md.get_string("hostname"), "web-1");
}

}  // namespace
}  // namespace gp::test::fold
