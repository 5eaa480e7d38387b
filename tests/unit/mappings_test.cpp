// executable_mappings and BuildIdCache on the test process itself and on children.

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gp/elf/build_id.h"
#include "gp/proc/process.h"
#include "proc_test_support.h"

namespace gp::test::proc {
namespace {

using gp::elf::build_id_hex;
using gp::proc::BuildIdCache;
using gp::proc::executable_mappings;
using model::Mapping;
using model::MappingKind;

std::vector<Mapping> own_mappings(BuildIdCache* cache = nullptr) {
  auto maps = executable_mappings(::getpid(), {}, cache);
  EXPECT_TRUE(maps.ok()) << (maps.ok() ? "" : maps.error().message);
  return maps.ok() ? *maps : std::vector<Mapping>{};
}

const Mapping* find_path(const std::vector<Mapping>& maps, const std::string& path) {
  for (const Mapping& m : maps) {
    if (m.path == path) return &m;
  }
  return nullptr;
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string copy_to(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream(to, std::ios::binary) << in.rdbuf();
  return to;
}

TEST(ExecutableMappings, IncludeTheOwnExecutableWithItsBuildId) {
  const std::vector<Mapping> maps = own_mappings();
  const Mapping* exe = find_path(maps, self_exe());
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(exe->kind, MappingKind::user);
  EXPECT_EQ(exe->pid, ::getpid());
  EXPECT_LT(exe->start, exe->end);
  EXPECT_NE(exe->inode, 0u);
  EXPECT_EQ(build_id_hex(exe->build_id), readelf_build_id(self_exe()));
  EXPECT_FALSE(exe->build_id.empty());
  // The code of this very function lies in one of the executable's mappings.
  const auto here = reinterpret_cast<uint64_t>(&own_mappings);
  bool covered = false;
  for (const Mapping& m : maps)
    covered = covered || (m.path == self_exe() && m.start <= here && here < m.end);
  EXPECT_TRUE(covered);
}

TEST(ExecutableMappings, ShowADlopenedLibraryWithItsBuildId) {
  char real[PATH_MAX];
  ASSERT_NE(::realpath(GP_FIXTURE_LIB, real), nullptr);
  EXPECT_EQ(find_path(own_mappings(), real), nullptr);
  void* handle = ::dlopen(real, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const std::vector<Mapping> maps = own_mappings();
  const Mapping* lib = find_path(maps, real);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(build_id_hex(lib->build_id), GP_FIXTURE_LIB_BUILD_ID);
  const auto fn = reinterpret_cast<uint64_t>(::dlsym(handle, "gp_fixture_lib_function"));
  EXPECT_TRUE(lib->start <= fn && fn < lib->end);
  ::dlclose(handle);
}

TEST(ExecutableMappings, ReadDeletedFilesAndPathsWithSpacesThroughMapFiles) {
  if (::geteuid() != 0) GTEST_SKIP() << "/proc/PID/map_files needs root (CAP_SYS_ADMIN)";
  char tmpl[] = "/tmp/gp maps XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string path = copy_to(GP_FIXTURE_LIB, std::string(tmpl) + "/lib with spaces.so");
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const Mapping* spaced = nullptr;
  std::vector<Mapping> maps = own_mappings();
  spaced = find_path(maps, path);
  ASSERT_NE(spaced, nullptr);
  EXPECT_EQ(build_id_hex(spaced->build_id), GP_FIXTURE_LIB_BUILD_ID);
  ::unlink(path.c_str());
  ::rmdir(tmpl);
  maps = own_mappings();
  const Mapping* deleted = find_path(maps, path + " (deleted)");
  ASSERT_NE(deleted, nullptr);
  EXPECT_EQ(build_id_hex(deleted->build_id), GP_FIXTURE_LIB_BUILD_ID);
  ::dlclose(handle);
}

TEST(ExecutableMappings, TheVdsoIsReadOncePerCache) {
  gp::proc::BuildIdCache cache;
  auto first = gp::proc::executable_mappings(::getpid(), {}, &cache);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const Mapping* vdso = find_path(*first, "[vdso]");
  ASSERT_NE(vdso, nullptr);
  ASSERT_FALSE(vdso->build_id.empty());
  const std::string* cached = cache.vdso(vdso->end - vdso->start);
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(*cached, vdso->build_id);
  // Later snapshots take it from the cache, not from the process's memory: a marker stored
  // there comes back.
  cache.set_vdso(vdso->end - vdso->start, "cached");
  auto again = gp::proc::executable_mappings(::getpid(), {}, &cache);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(find_path(*again, "[vdso]")->build_id, "cached");
}

TEST(ExecutableMappings, ClassifyVdsoAndAnonymousCode) {
  void* code = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(code, MAP_FAILED);
  const std::vector<Mapping> maps = own_mappings();
  const auto addr = reinterpret_cast<uint64_t>(code);
  bool anon = false;
  for (const Mapping& m : maps) {
    if (m.start <= addr && addr < m.end) {
      anon = true;
      EXPECT_EQ(m.kind, MappingKind::anonymous);
      EXPECT_EQ(m.path, "");
      EXPECT_EQ(m.build_id, "");
    }
  }
  EXPECT_TRUE(anon);
  ::munmap(code, 4096);

  const Mapping* vdso = find_path(maps, "[vdso]");
  ASSERT_NE(vdso, nullptr);
  EXPECT_EQ(vdso->kind, MappingKind::vdso);
  EXPECT_EQ(vdso->start, getauxval(AT_SYSINFO_EHDR));
  // readelf reads a file: dump the vDSO image and compare.
  const std::string dump = "/tmp/gp-vdso-" + std::to_string(::getpid());
  std::ofstream(dump, std::ios::binary)
      .write(reinterpret_cast<const char*>(vdso->start),
             static_cast<std::streamsize>(vdso->end - vdso->start));
  EXPECT_EQ(build_id_hex(vdso->build_id), readelf_build_id(dump));
  EXPECT_FALSE(vdso->build_id.empty());
  ::unlink(dump.c_str());
}

TEST(ExecutableMappings, CacheServesSharedLibrariesAcrossProcesses) {
  BuildIdCache cache;
  const std::vector<Mapping> first = own_mappings(&cache);
  const uint64_t misses = cache.misses();
  EXPECT_GT(misses, 0u);
  EXPECT_EQ(cache.hits(), 0u);
  const std::vector<Mapping> second = own_mappings(&cache);
  EXPECT_EQ(cache.misses(), misses);
  EXPECT_GE(cache.hits(), misses);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(first[i].build_id, second[i].build_id) << first[i].path;

  // A child running another program shares libc with us: served from the cache.
  int exec_done[2];
  ASSERT_EQ(::pipe2(exec_done, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl("/bin/sleep", "sleep", "30", nullptr);
    ::_exit(127);
  }
  ::close(exec_done[1]);
  char c;
  while (::read(exec_done[0], &c, 1) > 0) {  // EOF once the child exec'd (close-on-exec)
  }
  ::close(exec_done[0]);
  const uint64_t hits_before = cache.hits();
  auto theirs = executable_mappings(child, {}, &cache);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(theirs.ok()) << theirs.error().message;
  EXPECT_GT(cache.hits(), hits_before);
  bool has_sleep = false;
  for (const Mapping& m : *theirs)
    has_sleep = has_sleep || (m.path.find("sleep") != std::string::npos && !m.build_id.empty());
  EXPECT_TRUE(has_sleep);
}

TEST(ExecutableMappings, ReportAProcessThatExited) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  auto maps = executable_mappings(child);
  ASSERT_FALSE(maps.ok());
  EXPECT_EQ(maps.error().message, "process " + std::to_string(child) + " exited");
}

}  // namespace
}  // namespace gp::test::proc
