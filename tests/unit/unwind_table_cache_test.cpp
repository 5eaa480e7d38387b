// TableCache: a table written under a build-id comes back equal; anything else in the directory
// (another build-id's entry, a truncated or flipped one, a symlink, another user's file, a
// world-writable one) is refused, deleted and reported, never used; a directory that is a
// symlink or writable by others is not used at all; the size bound evicts the oldest entries.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gp/unwind/table.h"
#include "gp/unwind/table_cache.h"

namespace gp::test::unwind {
namespace {

namespace fs = std::filesystem;
using gp::unwind::LoadedBinary;
using gp::unwind::TableCache;

const std::string kId("\x12\x34\xab\xcd", 4);
const std::string kName = TableCache::entry_name(kId);

LoadedBinary libc_table() {
  const int fd = ::open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  auto packed = gp::unwind::build_packed(fd);
  ::close(fd);
  EXPECT_TRUE(packed.ok());
  return LoadedBinary{packed.ok() ? *packed : gp::unwind::PackedTable{}, {{0, 0, 4096}}};
}

bool same(const LoadedBinary& a, const LoadedBinary& b) {
  auto eq = [](const auto& x, const auto& y) {
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  return a.table.base == b.table.base && eq(a.table.rows, b.table.rows) &&
         eq(a.table.pages, b.table.pages) && eq(a.table.rules, b.table.rules) &&
         eq(a.segments, b.segments);
}

class TableCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gp-table-cache-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/cache";
  }
  void TearDown() override { fs::remove_all(root_); }
  TableCache::Warn collect() {
    return [this](const std::string& w) { warnings_.push_back(w); };
  }
  std::string entry() const { return dir_ + "/" + kName; }
  // Writes the good entry with a fresh cache.
  void write_good() {
    TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
    c.store(kId, 1000, table_);
    ASSERT_EQ(c.stats().written, 1u);
  }
  // A fresh cache's lookup of kId: whether it was refused, and nothing returned.
  void expect_refused(const std::string& why) {
    warnings_.clear();
    TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
    EXPECT_FALSE(c.load(kId, 1000).has_value());
    EXPECT_EQ(c.stats().refused, 1u);
    EXPECT_EQ(c.stats().hits, 0u);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find(why), std::string::npos) << warnings_[0];
    EXPECT_FALSE(fs::exists(fs::symlink_status(entry()))) << "a refused entry stays";
  }

  std::string root_, dir_;
  std::vector<std::string> warnings_;
  LoadedBinary table_ = libc_table();
};

TEST_F(TableCacheTest, WrittenTableComesBackEqual) {
  write_good();
  struct stat st;
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(entry().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
  auto got = c.load(kId, 1000);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(same(*got, table_));
  EXPECT_EQ(c.stats().hits, 1u);
  EXPECT_FALSE(c.load(std::string("\x99", 1), 1000).has_value());
  EXPECT_EQ(c.stats().misses, 1u);
  EXPECT_TRUE(warnings_.empty());
  // No temporary file is left behind.
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().filename(), kName);
}

TEST_F(TableCacheTest, AnotherBuildIdsEntryUnderThisNameIsRefused) {
  TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
  c.store(std::string("\x55", 1), 1000, table_);
  fs::rename(dir_ + "/" + TableCache::entry_name("\x55"), entry());
  expect_refused("another build-id");
}

TEST_F(TableCacheTest, AnEntryForAnotherFileSizeIsRefused) {
  write_good();
  warnings_.clear();
  TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
  EXPECT_FALSE(c.load(kId, 999).has_value());
  EXPECT_EQ(c.stats().refused, 1u);
}

TEST_F(TableCacheTest, TruncatedAndFlippedEntriesAreRefused) {
  write_good();
  fs::resize_file(entry(), fs::file_size(entry()) - 100);
  expect_refused("truncated");
  write_good();
  {
    std::fstream f(entry(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
  }
  expect_refused("checksum");
  write_good();
  std::ofstream(entry(), std::ios::trunc) << "GPUWTAB1 not really";
  expect_refused("truncated");
}

TEST_F(TableCacheTest, SymlinksAndOthersFilesAreRefused) {
  write_good();
  fs::rename(entry(), root_ + "/elsewhere");
  fs::create_symlink(root_ + "/elsewhere", entry());
  expect_refused("symlink");
  EXPECT_TRUE(fs::exists(root_ + "/elsewhere")) << "the link's target was removed";
  write_good();
  ASSERT_EQ(::chmod(entry().c_str(), 0666), 0);
  expect_refused("writable by other users");
  if (::geteuid() == 0) {
    write_good();
    ASSERT_EQ(::chown(entry().c_str(), 65534, 65534), 0);
    expect_refused("owned by uid 65534");
  }
}

TEST_F(TableCacheTest, ADirectoryThatIsASymlinkOrWritableByOthersIsNotUsed) {
  fs::create_directory(root_ + "/real");
  fs::create_directory_symlink(root_ + "/real", dir_);
  TableCache link(dir_, TableCache::kDefaultMaxBytes, collect());
  EXPECT_FALSE(link.enabled());
  link.store(kId, 1000, table_);
  EXPECT_TRUE(fs::is_empty(root_ + "/real"));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("symlink"), std::string::npos) << warnings_[0];
  fs::remove(dir_);
  fs::create_directory(dir_);
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  TableCache open(dir_, TableCache::kDefaultMaxBytes, collect());
  EXPECT_FALSE(open.enabled());
  EXPECT_NE(warnings_.back().find("writable by other users"), std::string::npos);
}

TEST_F(TableCacheTest, AnUnwritableDirectoryIsReportedOnceAndCounted) {
  write_good();
  ASSERT_EQ(::chmod(dir_.c_str(), 0500), 0);
  if (::geteuid() == 0) {
    // root writes anyway: make the entry's name a directory instead, so the rename fails.
    ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
    fs::remove(entry());
    fs::create_directory(entry());
    fs::create_directory(entry() + "/x");
  }
  warnings_.clear();
  TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
  c.store(kId, 1000, table_);
  c.store(kId, 1000, table_);
  EXPECT_EQ(c.stats().write_failed, 2u);
  EXPECT_EQ(c.stats().written, 0u);
  EXPECT_EQ(warnings_.size(), 1u);
  ::chmod(dir_.c_str(), 0700);
}

TEST_F(TableCacheTest, TheOldestEntriesAreEvictedPastTheBound) {
  const uint64_t one = gp::unwind::encode_table_entry(kId, 1000, table_).size();
  TableCache c(dir_, one * 2 + one / 2, collect());
  for (char id : {'a', 'b', 'c'}) c.store(std::string(1, id), 1000, table_);
  EXPECT_EQ(c.stats().written, 3u);
  EXPECT_EQ(c.stats().evicted, 1u);
  EXPECT_FALSE(fs::exists(dir_ + "/" + TableCache::entry_name("a")));
  EXPECT_TRUE(fs::exists(dir_ + "/" + TableCache::entry_name("b")));
  EXPECT_TRUE(fs::exists(dir_ + "/" + TableCache::entry_name("c")));
}

TEST_F(TableCacheTest, AnotherVersionsEntryIsLeftToItsRecorder) {
  // A recorder of another version on the same host wrote its entry for this build-id: this one
  // keeps its own entry beside it (no refusal, no rewrite), and both stay until evicted.
  {
    TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
    c.store(kId, 1000, table_);
  }
  // The other version's entry: our bytes with its version, under its name.
  const uint32_t version = gp::unwind::kTableEntryVersion + 1;
  std::string other = entry();
  const std::string ours = ".v" + std::to_string(version - 1) + ".";
  if (auto at = other.rfind(ours); at != std::string::npos)
    other.replace(at, ours.size(), ".v" + std::to_string(version) + ".");
  std::ifstream in(entry(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  std::memcpy(bytes.data() + 8, &version, sizeof version);
  std::ofstream(other, std::ios::binary | std::ios::trunc) << bytes;
  TableCache c(dir_, TableCache::kDefaultMaxBytes, collect());
  EXPECT_TRUE(c.load(kId, 1000).has_value());
  EXPECT_EQ(c.stats().refused, 0u);
  EXPECT_TRUE(warnings_.empty());
  EXPECT_TRUE(fs::exists(other));
}

}  // namespace
}  // namespace gp::test::unwind
