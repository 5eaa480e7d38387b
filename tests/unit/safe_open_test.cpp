// open_for_writing: links and files another user planted in a sticky world-writable directory
// are refused (the fs.protected_symlinks / protected_regular rules, kept even with the sysctls
// off), what the caller owns is opened, and outside such directories paths open as open(2) does.
// The pid file of gp-profile and archive outputs use it.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gp/archive/byte_io.h"
#include "gp/profile/instance.h"
#include "gp/util/safe_open.h"

namespace gp::test::util {
namespace {

namespace fs = std::filesystem;
using gp::util::open_for_writing;

constexpr uid_t kOther = 65534;  // nobody

class SafeOpen : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files another owner";
    char tmpl[] = "/tmp/gp-safe-open-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    pub_ = root_ / "pub";
    fs::create_directory(pub_);
    ASSERT_EQ(::chmod(pub_.c_str(), 01777), 0);  // like /tmp
    victim_ = root_ / "victim";
    std::ofstream(victim_) << "precious\n";
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  // A symlink at `at` naming the victim, owned by `owner`.
  void plant_link(const fs::path& at, uid_t owner) {
    ASSERT_EQ(::symlink(victim_.c_str(), at.c_str()), 0);
    ASSERT_EQ(::lchown(at.c_str(), owner, owner), 0);
  }
  std::string victim() {
    std::stringstream s;
    s << std::ifstream(victim_).rdbuf();
    return s.str();
  }
  fs::path root_, pub_, victim_;
};

TEST_F(SafeOpen, RefusesAnotherUsersLinkInAStickyWorldWritableDirectory) {
  plant_link(pub_ / "out.gpa", kOther);
  auto fd = open_for_writing((pub_ / "out.gpa").string(), O_WRONLY | O_CREAT | O_TRUNC);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error().message,
            "refused '" + (pub_ / "out.gpa").string() +
                "': a symbolic link owned by uid 65534 in a sticky world-writable directory");
  EXPECT_EQ(victim(), "precious\n");
}

TEST_F(SafeOpen, RefusesAnotherUsersFileThereWhenCreating) {
  std::ofstream(pub_ / "gp.log") << "theirs\n";
  ASSERT_EQ(::chown((pub_ / "gp.log").c_str(), kOther, kOther), 0);
  auto fd = open_for_writing((pub_ / "gp.log").string(), O_WRONLY | O_CREAT | O_APPEND);
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.error().message.find("a file owned by uid 65534"), std::string::npos);
}

TEST_F(SafeOpen, FollowsTheCallersOwnLinkAndCreatesNewFiles) {
  plant_link(pub_ / "mine", ::geteuid());
  auto fd = open_for_writing((pub_ / "mine").string(), O_WRONLY | O_TRUNC);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  ::close(*fd);
  EXPECT_EQ(victim(), "");
  auto fresh = open_for_writing((pub_ / "new").string(), O_WRONLY | O_CREAT | O_EXCL);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  ::close(*fresh);
}

TEST_F(SafeOpen, OutsideStickyDirectoriesLinksAreFollowedAsOpenDoes) {
  plant_link(root_ / "link", kOther);
  auto fd = open_for_writing((root_ / "link").string(), O_WRONLY | O_APPEND);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  ::close(*fd);
}

TEST_F(SafeOpen, PidFileRefusesALinkPlantedUnderItsTemporaryName) {
  plant_link(pub_ / "gp.pid.tmp", kOther);
  auto pf = gp::profile::PidFile::create((pub_ / "gp.pid").string());
  ASSERT_FALSE(pf.ok());
  EXPECT_NE(pf.error().message.find("refused"), std::string::npos) << pf.error().message;
  EXPECT_EQ(victim(), "precious\n");
  EXPECT_FALSE(fs::exists(pub_ / "gp.pid"));
}

TEST_F(SafeOpen, ArchiveOutputRefusesAPlantedLink) {
  plant_link(pub_ / "run.gpa", kOther);
  auto out = gp::archive::OutputStream::open((pub_ / "run.gpa").string(), true);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("refused"), std::string::npos) << out.error().message;
  EXPECT_EQ(victim(), "precious\n");
}

// Two writers of one archive: the second is refused with the first's pid, and the first's
// bytes stay (the second does not truncate before it knows).
TEST_F(SafeOpen, ASecondWriterOfAnArchiveIsRefusedWithThePidOfTheFirst) {
  const std::string path = (root_ / "run.gpa").string();
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    auto out = gp::archive::OutputStream::open(path, false);
    if (!out || !(*out)->write("first", 5)) ::_exit(1);
    (void)::write(ready[1], "x", 1);
    char c;
    (void)::read(done[0], &c, 1);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  auto second = gp::archive::OutputStream::open(path, false);
  (void)::write(done[1], "x", 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message,
            "cannot write '" + path + "': process " + std::to_string(child) + " is writing it");
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  EXPECT_EQ(s.str(), "first");
  auto third = gp::archive::OutputStream::open(path, false);  // the first is done
  EXPECT_TRUE(third.ok());
}

}  // namespace
}  // namespace gp::test::util
