// ProcessTables on this test's own process: its real mappings (libc, the vDSO, the test binary)
// get tables, and an address turns into the right row through the bias.
#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "gp/proc/process.h"
#include "gp/unwind/process_tables.h"
#include "unwind_memory.h"

namespace gp::test::unwind {
namespace {

using gp::unwind::PackedRule;
using gp::unwind::ProcessTables;
using gp::unwind::Segment;
using gp::unwind::StoreLimits;
using gp::unwind::TableStore;

std::vector<model::Mapping> own_mappings() {
  proc::SnapshotOptions options;
  proc::BuildIdCache cache;
  auto maps = proc::executable_mappings(getpid(), options, &cache);
  EXPECT_TRUE(maps) << (maps ? "" : maps.error().message);
  return maps ? *maps : std::vector<model::Mapping>{};
}

// No table is referenced any more: one as large as the arrays evicts every other.
void expect_all_evictable(TableStore& store, const StoreLimits& limits) {
  gp::unwind::LoadedBinary big;
  big.table.rows.resize(limits.rows);
  big.table.pages.resize(1);
  auto got = store.acquire("big", [&]() -> Result<gp::unwind::LoadedBinary> { return big; });
  EXPECT_TRUE(got) << (got ? "" : got.error().message);
  EXPECT_EQ(store.stats().tables, 1u);
}

TEST(MappingBias, TurnsAnAddressIntoItsOffsetFromTheTableBase) {
  // Text at file offset 0x28000, virtual address 0x29000 (a gap before it), table base 0x28000;
  // mapped at 0x7f0000028000 from file offset 0x28000.
  std::vector<Segment> segments{{0, 0, 0x1000}, {0x28000, 0x29000, 0x1000}};
  uint64_t bias = 0;
  ASSERT_TRUE(gp::unwind::mapping_bias(segments, 0x28000, 0x7f0000028000, 0x28000, &bias));
  // vaddr 0x29010 is mapped at 0x7f0000028010: its table offset is 0x1010.
  EXPECT_EQ(0x7f0000028010 - bias, 0x1010u);
  EXPECT_FALSE(gp::unwind::mapping_bias(segments, 0x28000, 0x7f0000100000, 0x100000, &bias));
}

TEST(ProcessTables, FindsTheEntryRuleOfALibcFunctionInThisProcess) {
  StoreLimits limits{1u << 21, 1u << 16, 64};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  ProcessTables tables(store, gp::unwind::open_mapped_file, gp::unwind::own_vdso_image());
  bool changed = false;
  auto entries = tables.update(getpid(), own_mappings(), &changed);
  EXPECT_TRUE(changed);
  ASSERT_FALSE(entries.empty());
  EXPECT_TRUE(std::is_sorted(entries.begin(), entries.end(),
                             [](auto& a, auto& b) { return a.start < b.start; }));
  // At a function's first instruction the return address was just pushed: CFA = rsp + 8.
  for (auto fn : {reinterpret_cast<uint64_t>(&::getpid), reinterpret_cast<uint64_t>(&::qsort)}) {
    const PackedRule* row = mem.rule_at(entries, fn);
    ASSERT_NE(row, nullptr) << std::hex << fn;
    EXPECT_EQ(row->kind, 1);  // rsp
    EXPECT_EQ(row->cfa_offset, 8);
  }
  // The same mappings again: nothing changes, and libc's table is not loaded twice.
  uint64_t loaded = store.stats().loaded;
  tables.update(getpid(), own_mappings(), &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(store.stats().loaded, loaded);
}

TEST(ProcessTables, GivesTheVdsoATableFromThisProcessesOwnImage) {
  if (getauxval(AT_SYSINFO_EHDR) == 0) GTEST_SKIP() << "no vDSO in this process";
  StoreLimits limits{1u << 21, 1u << 16, 64};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  ProcessTables tables(store, gp::unwind::open_mapped_file, gp::unwind::own_vdso_image());
  bool changed = false;
  auto maps = own_mappings();
  auto vdso = std::find_if(maps.begin(), maps.end(),
                           [](auto& m) { return m.kind == model::MappingKind::vdso; });
  ASSERT_NE(vdso, maps.end());
  auto entries = tables.update(getpid(), maps, &changed);
  bool covered =
      std::any_of(entries.begin(), entries.end(), [&](auto& e) { return e.start == vdso->start; });
  EXPECT_TRUE(covered);
}

TEST(ProcessTables, AFileThatCouldNotBeOpenedIsTriedAgainForTheNextProcess) {
  StoreLimits limits{1u << 21, 1u << 16, 64};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  bool gone = true;  // the first process exits before its files are opened
  ProcessTables tables(store,
                       [&](int32_t pid, const model::Mapping& m) {
                         return gone ? (errno = ENOENT, -1) : gp::unwind::open_mapped_file(pid, m);
                       },
                       {});
  auto maps = own_mappings();
  bool changed = false;
  EXPECT_TRUE(tables.update(getpid(), maps, &changed).empty());
  gone = false;
  EXPECT_FALSE(tables.update(getpid(), maps, &changed).empty());
}

TEST(OpenMappedFile, OpensAnExitedProcesssFileByPathOnlyWhenItIsStillTheMappedOne) {
  // A pid with no process: a child that has exited and been reaped.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  auto maps = own_mappings();
  auto file = std::find_if(maps.begin(), maps.end(), [](auto& m) {
    return m.kind == model::MappingKind::user && !m.path.empty() && m.path[0] == '/' &&
           m.inode != 0 && !m.build_id.empty();
  });
  ASSERT_NE(file, maps.end());
  int fd = gp::unwind::open_mapped_file(child, *file);
  EXPECT_GE(fd, 0) << file->path;
  if (fd >= 0) close(fd);
  // Another file at the path now (another inode), or another build-id: refused.
  model::Mapping replaced = *file;
  replaced.inode += 1;
  EXPECT_LT(gp::unwind::open_mapped_file(child, replaced), 0);
  model::Mapping rebuilt = *file;
  rebuilt.build_id[0] = static_cast<char>(rebuilt.build_id[0] ^ 0xff);
  EXPECT_LT(gp::unwind::open_mapped_file(child, rebuilt), 0);
}

TEST(ProcessTables, ReleasesAForgottenProcesssTables) {
  StoreLimits limits{1u << 21, 1u << 16, 64};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  ProcessTables tables(store, gp::unwind::open_mapped_file, {});
  bool changed = false;
  auto entries = tables.update(getpid(), own_mappings(), &changed);
  ASSERT_FALSE(entries.empty());
  tables.forget(getpid());
  // Every table is unused now.
  expect_all_evictable(store, limits);
}

TEST(ProcessTables, AnUpdateStoppedBetweenMappingsKeepsTheOldEntriesAndReleasesItsTables) {
  StoreLimits limits{1u << 21, 1u << 16, 64};
  ArrayMemory mem(limits);
  TableStore store(mem, limits);
  ProcessTables tables(store, gp::unwind::open_mapped_file, {});
  auto maps = own_mappings();
  auto file = [](const model::Mapping& m) {
    return m.kind == model::MappingKind::user && !m.path.empty() && m.path[0] == '/';
  };
  ASSERT_GE(std::count_if(maps.begin(), maps.end(), file), 2);
  // The process's entries before: its first file mapping alone.
  std::vector<model::Mapping> first{*std::find_if(maps.begin(), maps.end(), file)};
  bool changed = false;
  auto before = tables.update(getpid(), first, &changed);
  ASSERT_EQ(before.size(), 1u);
  // An exec comes once two of its mappings' tables are there: the third is never asked for.
  int asked = 0;
  auto stopped = tables.update_unless(getpid(), maps, &changed, [&] { return ++asked > 2; });
  EXPECT_FALSE(stopped.has_value());
  EXPECT_FALSE(changed);
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(tables.stats().stopped, 1u);
  ASSERT_NE(tables.entries(getpid()), nullptr);
  EXPECT_EQ(*tables.entries(getpid()), before);
  // Not stopped: every mapping, as update gives them.
  auto whole = tables.update_unless(getpid(), maps, &changed, [] { return false; });
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(changed);
  EXPECT_GT(whole->size(), before.size());
  // The stopped update took no reference: once the process is forgotten, a table as large as
  // the arrays evicts every other.
  tables.forget(getpid());
  expect_all_evictable(store, limits);
}

}  // namespace
}  // namespace gp::test::unwind
