// gp-profile's output directory (reference/gprofiler.md §10): timestamped names, relative
// last_* links replaced atomically, --rotating-output keeping only the newest file.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gp/profile/output.h"

namespace gp::test::profile_output {
namespace {

namespace fs = std::filesystem;
using gp::profile::kLastProfileLink;

class ProfileOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gp-profile-output.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ / "work");
    fs::create_directories(root_ / "out");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path make(const std::string& name, const std::string& text) {
    fs::path p = root_ / "work" / name;
    std::ofstream(p) << text;
    return p;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path out() const { return root_ / "out"; }

  fs::path root_;
};

TEST(ProfileNames, StampIsNaiveUtcWithoutFraction) {
  auto t = std::chrono::system_clock::from_time_t(1714566896) + std::chrono::milliseconds(789);
  EXPECT_EQ(gp::profile::utc_stamp(t), "2024-05-01T12:34:56");
}

TEST_F(ProfileOutput, StemIsMadeUniqueWhenTwoSessionsEndInTheSameSecond) {
  EXPECT_EQ(gp::profile::profile_stem(out(), "2024-05-01T12:34:56"), "profile_2024-05-01T12:34:56");
  std::ofstream(out() / "profile_2024-05-01T12:34:56.col") << "x";
  EXPECT_EQ(gp::profile::profile_stem(out(), "2024-05-01T12:34:56"),
            "profile_2024-05-01T12:34:56_2");
  std::ofstream(out() / "profile_2024-05-01T12:34:56_2.html") << "x";
  EXPECT_EQ(gp::profile::profile_stem(out(), "2024-05-01T12:34:56"),
            "profile_2024-05-01T12:34:56_3");
}

TEST_F(ProfileOutput, PublishMovesTheFileAndPointsARelativeLinkAtIt) {
  auto src = make("a.col", "first");
  ASSERT_TRUE(gp::profile::publish(src, out(), "profile_1.col", kLastProfileLink, false));
  EXPECT_FALSE(fs::exists(src));
  EXPECT_EQ(read(out() / "profile_1.col"), "first");
  EXPECT_EQ(fs::read_symlink(out() / kLastProfileLink), "profile_1.col");
  EXPECT_FALSE(fs::exists(out() / (std::string(kLastProfileLink) + ".tmp")));
}

TEST_F(ProfileOutput, WithoutRotationEveryProfileStays) {
  ASSERT_TRUE(
      gp::profile::publish(make("a", "1"), out(), "profile_1.col", kLastProfileLink, false));
  ASSERT_TRUE(
      gp::profile::publish(make("b", "2"), out(), "profile_2.col", kLastProfileLink, false));
  EXPECT_TRUE(fs::exists(out() / "profile_1.col"));
  EXPECT_EQ(read(out() / kLastProfileLink), "2");
}

TEST_F(ProfileOutput, RotationDeletesThePreviousTargetOnly) {
  std::ofstream(out() / "unrelated.col") << "keep";
  ASSERT_TRUE(gp::profile::publish(make("a", "1"), out(), "profile_1.col", kLastProfileLink, true));
  ASSERT_TRUE(gp::profile::publish(make("b", "2"), out(), "profile_2.col", kLastProfileLink, true));
  ASSERT_TRUE(gp::profile::publish(make("c", "3"), out(), "profile_3.col", kLastProfileLink, true));
  EXPECT_FALSE(fs::exists(out() / "profile_1.col"));
  EXPECT_FALSE(fs::exists(out() / "profile_2.col"));
  EXPECT_EQ(read(out() / kLastProfileLink), "3");
  EXPECT_TRUE(fs::exists(out() / "unrelated.col"));
}

TEST_F(ProfileOutput, RotationNeverFollowsALinkOutOfTheDirectory) {
  fs::path outside = root_ / "precious";
  std::ofstream(outside) << "keep";
  fs::create_symlink(outside, out() / kLastProfileLink);
  ASSERT_TRUE(gp::profile::publish(make("a", "1"), out(), "profile_1.col", kLastProfileLink, true));
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_EQ(fs::read_symlink(out() / kLastProfileLink), "profile_1.col");
}

TEST_F(ProfileOutput, RepublishingTheSameNameKeepsTheFile) {
  ASSERT_TRUE(gp::profile::publish(make("a", "1"), out(), "p.col", kLastProfileLink, true));
  ASSERT_TRUE(gp::profile::publish(make("b", "2"), out(), "p.col", kLastProfileLink, true));
  EXPECT_EQ(read(out() / "p.col"), "2");
}

TEST_F(ProfileOutput, PublishIntoAMissingDirectoryFailsWithThePath) {
  auto r = gp::profile::publish(make("a", "1"), root_ / "nope", "p.col", kLastProfileLink, false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nope"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace gp::test::profile_output
