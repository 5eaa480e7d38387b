// Placing gp's Node addon where a target in another root can load it: a copy in the
// target's /tmp, made without following links planted there, and removed afterwards.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/node/node_target.h"

namespace gp::test::runtime_node {
namespace {

namespace fs = std::filesystem;

// A child process whose root directory is `root` (chroot, then it just waits).
class ChrootedChild {
 public:
  explicit ChrootedChild(const fs::path& root) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      const bool ok = ::chroot(root.c_str()) == 0 && ::chdir("/") == 0;
      (void)::write(ready[1], ok ? "y" : "n", 1);
      while (true) ::pause();
    }
    ::close(ready[1]);
    char c = 'n';
    chrooted_ = ::read(ready[0], &c, 1) == 1 && c == 'y';
    ::close(ready[0]);
  }
  ~ChrootedChild() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  bool chrooted() const { return chrooted_; }

 private:
  pid_t pid_ = 0;
  bool chrooted_ = false;
};

class AddonPlacement : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (chroot)";
    char tmpl[] = "/tmp/gp-node-place.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    addon_ = dir_ / "addon.node";
    std::ofstream(addon_) << "not really an ELF, but bytes to copy";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  runtime::Target target_of(pid_t pid) {
    runtime::Target t;
    t.pid = pid;
    t.runtime = runtime::Runtime::node;
    t.root = "/proc/" + std::to_string(pid) + "/root";
    return t;
  }
  fs::path dir_, addon_;
};

TEST_F(AddonPlacement, SameRootUsesTheInstalledFile) {
  auto placed = runtime::node::place_addon(target_of(::getpid()), addon_.string());
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_EQ(placed->path_in_target, addon_.string());
  EXPECT_FALSE(placed->tmp_dir.valid());
}

TEST_F(AddonPlacement, OtherRootGetsAPrivateCopyInItsTmpThatIsRemovedAfterwards) {
  const fs::path root = dir_ / "root";
  fs::create_directories(root / "tmp");
  ChrootedChild child(root);
  ASSERT_TRUE(child.chrooted());
  auto placed = runtime::node::place_addon(target_of(child.pid()), addon_.string());
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  const std::string& in_target = placed->path_in_target;
  EXPECT_EQ(in_target.rfind("/tmp/gp-node-", 0), 0u) << in_target;
  const fs::path on_host = root / in_target.substr(1);
  std::ifstream in(on_host);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "not really an ELF, but bytes to copy");
  struct stat st {};
  ASSERT_EQ(::stat(on_host.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);  // readable by a non-root target
  runtime::node::remove_placed_addon(*placed);
  EXPECT_TRUE(fs::is_empty(root / "tmp"));
}

TEST_F(AddonPlacement, RefusesATmpThatIsASymbolicLink) {
  const fs::path root = dir_ / "root";
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(root);
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, root / "tmp");
  ChrootedChild child(root);
  ASSERT_TRUE(child.chrooted());
  auto placed = runtime::node::place_addon(target_of(child.pid()), addon_.string());
  ASSERT_FALSE(placed.ok());
  EXPECT_NE(placed.error().message.find("/tmp"), std::string::npos) << placed.error().message;
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

}  // namespace
}  // namespace gp::test::runtime_node
