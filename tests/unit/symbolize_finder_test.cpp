// DebugInfoFinder's documented lookup order and build-id checks, and export_symbols' store.
#include <gtest/gtest.h>

#include "gp/symbolize/debuginfo_finder.h"
#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/symbol_export.h"
#include "gp/symbolize/symbolizer.h"
#include "symbolize_fixture_test.h"

namespace gp::test::symbolize {
namespace {

using gp::symbolize::DebugInfoFinder;
using gp::symbolize::ElfFile;
using gp::symbolize::FinderOptions;
using gp::symbolize::FindStatus;

std::string build_id_of(const std::string& path) {
  auto f = ElfFile::open(path);
  return f ? f->build_id() : std::string();
}

FinderOptions isolated() {
  FinderOptions o;
  o.system_debug_root.clear();
  return o;
}

TEST(DebugInfoFinder, DebugDirComesBeforeTheRecordedPath) {
  TempDir dir;
  std::string id = build_id_of(fixture("sym_fp"));
  add_to_store(dir / "store", fixture("sym_fp"), /*as_binary=*/true);
  FinderOptions o = isolated();
  o.debug_dirs = {dir / "store"};
  auto found = DebugInfoFinder(o).find(fixture("sym_fp"), id);
  EXPECT_EQ(found.status, FindStatus::found);
  EXPECT_EQ(found.binary_source, "debug-dir");
  EXPECT_EQ(found.binary, dir / "store" + "/" + gp::symbolize::build_id_relpath(id));
  EXPECT_TRUE(found.debug.empty()) << "the binary has DWARF: no separate file needed";
}

TEST(DebugInfoFinder, SidecarStoreComesAfterDebugDirsAndBeforeTheRecordedPath) {
  TempDir dir;
  std::string id = build_id_of(fixture("sym_fp"));
  add_to_store(dir / "sidecar", fixture("sym_fp"), /*as_binary=*/true);
  add_to_store(dir / "store", fixture("sym_fp"), /*as_binary=*/true);
  FinderOptions o = isolated();
  o.sidecar = dir / "sidecar";
  auto found = DebugInfoFinder(o).find(fixture("sym_fp"), id);
  EXPECT_EQ(found.binary_source, "sidecar");
  EXPECT_EQ(found.binary, dir / "sidecar" + "/" + gp::symbolize::build_id_relpath(id));
  o.debug_dirs = {dir / "store"};
  EXPECT_EQ(DebugInfoFinder(o).find(fixture("sym_fp"), id).binary_source, "debug-dir");
}

TEST(DebugInfoFinder, SysrootCopyOfTheRecordedPath) {
  TempDir dir;
  ASSERT_EQ(sh("mkdir -p " + (dir / "root/opt/app")), 0);
  copy_file(fixture("sym_fp"), dir / "root/opt/app/fp");
  FinderOptions o = isolated();
  o.sysroot = dir / "root";
  auto found = DebugInfoFinder(o).find("/opt/app/fp", build_id_of(fixture("sym_fp")));
  EXPECT_EQ(found.status, FindStatus::found);
  EXPECT_EQ(found.binary_source, "sysroot");
}

TEST(DebugInfoFinder, PerfBuildidCacheLayout) {
  TempDir dir;
  std::string id = build_id_of(fixture("sym_fp"));
  std::string rel = gp::symbolize::build_id_relpath(id);
  ASSERT_EQ(sh("mkdir -p " + (dir / rel)), 0);
  copy_file(fixture("sym_fp"), dir / rel + "/elf");
  FinderOptions o = isolated();
  o.debug_dirs = {dir.path()};
  o.use_recorded_path = false;
  auto found = DebugInfoFinder(o).find("/gone/fp", id);
  EXPECT_EQ(found.status, FindStatus::found);
  EXPECT_EQ(found.binary, dir / rel + "/elf");
}

TEST(DebugInfoFinder, StrippedBinaryGetsItsDebugFileFromTheStore) {
  TempDir dir;
  ASSERT_EQ(sh("strip --strip-debug -o " + (dir / "fp") + " " + fixture("sym_fp") +
               " && objcopy --only-keep-debug " + fixture("sym_fp") + " " + (dir / "fp.debug")),
            0);
  add_to_store(dir / "store", dir / "fp.debug");
  FinderOptions o = isolated();
  o.debug_dirs = {dir / "store"};
  auto found = DebugInfoFinder(o).find(dir / "fp", build_id_of(fixture("sym_fp")));
  EXPECT_EQ(found.binary, dir / "fp");
  EXPECT_EQ(found.binary_source, "path");
  EXPECT_EQ(found.debug_source, "debug-dir");
}

TEST(DebugInfoFinder, MissingAndMismatchedFiles) {
  FinderOptions o = isolated();
  DebugInfoFinder finder(o);
  EXPECT_EQ(finder.find("/nonexistent/app", std::string(20, '\x11')).status, FindStatus::no_file);
  auto mismatch = finder.find(fixture("sym_nofp"), build_id_of(fixture("sym_fp")));
  EXPECT_EQ(mismatch.status, FindStatus::build_id_mismatch);
  EXPECT_EQ(mismatch.mismatched, fixture("sym_nofp"));
  // Without a recorded build-id nothing can be checked: the path is taken as is.
  EXPECT_EQ(finder.find(fixture("sym_nofp"), "").status, FindStatus::found);
}

TEST(ExportSymbols, StoreMakesTheArchiveSymbolizableWithoutTheOriginals) {
  TempDir dir;
  ASSERT_EQ(sh("cd " + dir.path() + " && objcopy --only-keep-debug " + fixture("sym_fp") +
               " app.debug && strip --strip-all -o app " + fixture("sym_fp") +
               " && objcopy --add-gnu-debuglink=app.debug app"),
            0);
  model::Session s;
  model::SessionBuilder b(s);
  Loaded l = load(b, dir / "app", 0x560000000000);
  uint64_t leaf = add_location(b, l, symbol(fixture("sym_fp"), "fp_leaf").address + 4, false);
  auto report = gp::symbolize::export_symbols({s}, isolated(), dir / "store");
  ASSERT_TRUE(report);
  ASSERT_EQ(report->modules.size(), 1u);
  EXPECT_EQ(report->modules[0].problem, "");
  EXPECT_EQ(report->files_copied, 2u);  // the binary and its debuglink'ed debug file
  auto again = gp::symbolize::export_symbols({s}, isolated(), dir / "store");
  EXPECT_EQ(again->files_copied, 0u);
  EXPECT_EQ(again->files_present, 2u);

  ASSERT_EQ(sh("rm " + (dir / "app") + " " + (dir / "app.debug")), 0);
  gp::symbolize::SymbolizeOptions o;
  o.finder = isolated();
  o.finder.use_recorded_path = false;
  o.finder.debug_dirs = {dir / "store"};
  gp::symbolize::symbolize_session(s, o);
  EXPECT_EQ(names(s, leaf), std::vector<std::string>{"fp_leaf"});
}

}  // namespace
}  // namespace gp::test::symbolize
