// The per-JVM directory in the target's /tmp (runtime/java/target_dir.h): its name says which
// gp-runtime made it (pid and start time), and a later one removes those of runs that are
// gone (killed with SIGKILL), never a live run's, never through a link, nothing else.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gp/runtime/discovery.h"
#include "runtime/java/target_dir.h"

namespace gp::test::runtime_java {
namespace {

namespace fs = std::filesystem;
using gp::runtime::java::Credentials;
using gp::runtime::java::TargetDir;

struct TempRoot {
  fs::path path;
  TempRoot() {
    std::string tmpl = (fs::temp_directory_path() / "gp-jvmroot.XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
    fs::create_directories(path / "tmp");
  }
  ~TempRoot() { fs::remove_all(path); }
};

fs::path make_dir(const fs::path& tmp, const std::string& name) {
  fs::create_directories(tmp / name / "sub");
  std::ofstream(tmp / name / "rec.jfr") << "data";
  std::ofstream(tmp / name / "sub" / "chunk") << "data";
  return tmp / name;
}

TEST(JavaTargetDir, ALaterRunRemovesTheDirectoriesOfDeadRunsOnly) {
  TempRoot root;
  fs::path tmp = root.path / "tmp";
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a pid whose process is gone
  auto self = gp::runtime::read_stat(::getpid());
  ASSERT_TRUE(self);
  const std::string me = std::to_string(::getpid());
  const std::string hex = "0123456789abcdef";
  fs::path dead = make_dir(tmp, "gp-jfr-42-r" + std::to_string(child) + ".7-" + hex);
  fs::path reused =
      make_dir(tmp, "gp-ap-42-r" + me + "." + std::to_string(self->start_ticks + 1) + "-" + hex);
  fs::path live =
      make_dir(tmp, "gp-jfr-43-r" + me + "." + std::to_string(self->start_ticks) + "-" + hex);
  fs::path old_style = make_dir(tmp, "gp-jfr-42-" + hex);  // no owner in the name: unproven
  fs::path other = make_dir(tmp, "hsperfdata_root");
  fs::path outside = make_dir(root.path, "outside");
  fs::create_directory_symlink(outside,
                               tmp / ("gp-jfr-44-r" + std::to_string(child) + ".7-" + hex));

  Credentials owner{::getuid(), ::getgid()};
  auto dir = TargetDir::create(root.path.string(), "jfr-42", owner);
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(reused));
  EXPECT_TRUE(fs::exists(live / "rec.jfr"));
  EXPECT_TRUE(fs::exists(old_style / "rec.jfr"));
  EXPECT_TRUE(fs::exists(other / "rec.jfr"));
  EXPECT_TRUE(fs::exists(outside / "rec.jfr"));  // a link is never followed
  EXPECT_TRUE(fs::is_symlink(tmp / ("gp-jfr-44-r" + std::to_string(child) + ".7-" + hex)));

  // Its own directory names this process, so the next run can prove it left over.
  const std::string path = dir->target_path("x");
  const std::string name = path.substr(5, path.size() - 7);  // "/tmp/<name>/x"
  EXPECT_EQ(name.rfind("gp-jfr-42-r" + me + "." + std::to_string(self->start_ticks) + "-", 0), 0u)
      << name;
  EXPECT_TRUE(fs::is_directory(tmp / name));
  ASSERT_EQ(dir->write_file("gp.jfc", "<configuration/>").ok(), true);
  { auto moved = std::move(*dir); }
  EXPECT_FALSE(fs::exists(tmp / name));
}

}  // namespace
}  // namespace gp::test::runtime_java
