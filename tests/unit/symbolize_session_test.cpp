// symbolize_session over sessions built like a recorder's (SessionBuilder, mappings of a loaded
// PIE at an ASLR base): statuses, counters, kernel and JIT frames, idempotence, determinism.
#include <gtest/gtest.h>

#include "gp/archive/byte_io.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/symbolize/symbolizer.h"
#include "symbolize_fixture_test.h"

namespace gp::test::symbolize {
namespace {

using gp::symbolize::symbolize_session;
using gp::symbolize::SymbolizeOptions;
using model::FrameKind;
using model::SymbolStatus;

constexpr uint64_t kPieBase = 0x55d0c0de0000;

SymbolizeOptions stores_only(const std::vector<std::string>& dirs) {
  SymbolizeOptions o;
  o.finder.debug_dirs = dirs;
  o.finder.use_recorded_path = false;
  o.finder.system_debug_root.clear();
  return o;
}

std::string encode(model::Session s) {
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, false);
  archive::Writer w(*out);
  EXPECT_TRUE(w.write_session(s));
  EXPECT_TRUE(out->close());
  return bytes;
}

struct FpSession {
  model::Session s;
  uint64_t leaf = 0, middle = 0, outer = 0;
};

// A stack main <- fp_outer <- fp_middle <- fp_leaf of the fp fixture, recorded at `path`.
// Addresses come from the unstripped fixture (same layout as every variant made from it).
FpSession fp_session(const std::string& binary, const std::string& recorded_path) {
  FpSession f;
  model::SessionBuilder b(f.s);
  Loaded l = load(b, binary, kPieBase, 100, recorded_path);
  std::string named = fixture("sym_fp");
  f.leaf = add_location(b, l, symbol(named, "fp_leaf").address + 4, false);
  f.middle = add_location(b, l, symbol(named, "fp_middle").address + 5, true);
  f.outer = add_location(b, l, symbol(named, "fp_outer").address + 5, true);
  b.add_sample(100, 100, b.stack({f.leaf, f.middle, f.outer}), 7);
  return f;
}

TEST(SymbolizeSession, ResolvesUserFramesAndCountsStatuses) {
  FpSession f = fp_session(fixture("sym_fp"), fixture("sym_fp"));
  auto report = symbolize_session(f.s, SymbolizeOptions{});
  EXPECT_EQ(names(f.s, f.leaf), std::vector<std::string>{"fp_leaf"});
  EXPECT_EQ(names(f.s, f.middle), std::vector<std::string>{"fp_middle"});
  EXPECT_EQ(names(f.s, f.outer), std::vector<std::string>{"fp_outer"});
  EXPECT_EQ(f.s.location(f.leaf).status, SymbolStatus::resolved);
  EXPECT_EQ(f.s.location(f.leaf).kind, FrameKind::native);
  EXPECT_TRUE(f.s.header.symbolized);
  EXPECT_EQ(f.s.counter("symbolize.resolved"), 3);
  EXPECT_EQ(f.s.counter("symbolize.no-file"), 0);
  EXPECT_EQ(report.newly_resolved, 3u);
  EXPECT_EQ(report.misses(), 0u);
}

TEST(SymbolizeSession, OffHostFromADebugDirStoreOnly) {
  TempDir dir;
  // The "recording host" had the binary at dir/app; only a .build-id store travels.
  copy_file(fixture("sym_fp"), dir / "app");
  ASSERT_EQ(sh("objcopy --only-keep-debug " + (dir / "app") + " " + (dir / "app.debug")), 0);
  add_to_store(dir / "store", dir / "app.debug");
  FpSession f = fp_session(dir / "app", dir / "app");
  ASSERT_EQ(sh("rm " + (dir / "app") + " " + (dir / "app.debug")), 0);

  FpSession missing = f;
  symbolize_session(missing.s, stores_only({}));
  EXPECT_EQ(missing.s.location(missing.leaf).status, SymbolStatus::no_file);
  EXPECT_EQ(missing.s.counter("symbolize.no-file"), 3);

  symbolize_session(f.s, stores_only({dir / "store"}));
  EXPECT_EQ(names(f.s, f.leaf), std::vector<std::string>{"fp_leaf"});
  EXPECT_EQ(names(f.s, f.outer), std::vector<std::string>{"fp_outer"});
}

TEST(SymbolizeSession, RefusesAFileWithAnotherBuildId) {
  TempDir dir;
  FpSession f = fp_session(fixture("sym_fp"), dir / "app");
  copy_file(fixture("sym_nofp"), dir / "app");  // same path, different build
  auto report = symbolize_session(f.s, SymbolizeOptions{});
  EXPECT_EQ(f.s.location(f.leaf).status, SymbolStatus::build_id_mismatch);
  EXPECT_TRUE(f.s.location(f.leaf).lines.empty());
  EXPECT_EQ(f.s.counter("symbolize.build-id-mismatch"), 3);
  ASSERT_EQ(report.modules.size(), 1u);
  EXPECT_EQ(report.modules[0].files.mismatched, dir / "app");
}

TEST(SymbolizeSession, FollowsDebuglinkOnlyWhenTheCrcMatches) {
  TempDir dir;
  ASSERT_EQ(sh("cd " + dir.path() + " && objcopy --only-keep-debug " + fixture("sym_fp") +
               " app.debug && strip --strip-all -o app " + fixture("sym_fp") +
               " && objcopy --add-gnu-debuglink=app.debug app"),
            0);
  FpSession f = fp_session(dir / "app", dir / "app");
  FpSession corrupt = f;
  symbolize_session(f.s, SymbolizeOptions{});
  EXPECT_EQ(names(f.s, f.leaf), std::vector<std::string>{"fp_leaf"});

  ASSERT_EQ(sh("printf x >> " + (dir / "app.debug")), 0);  // the CRC no longer matches
  symbolize_session(corrupt.s, SymbolizeOptions{});
  EXPECT_EQ(corrupt.s.location(corrupt.leaf).status, SymbolStatus::no_symbol);
}

TEST(SymbolizeSession, SharedLibraryMappedAtItsOwnBase) {
  model::Session s;
  model::SessionBuilder b(s);
  std::string lib = fixture("libsym_shared.so");
  Loaded exe = load(b, fixture("sym_useshared"), kPieBase);
  Loaded so = load(b, lib, 0x7f3a12340000);
  uint64_t in_lib = add_location(b, so, symbol(lib, "shared_private_step").address + 1, false);
  uint64_t in_exe =
      add_location(b, exe, symbol(fixture("sym_useshared"), "main").address + 4, true);
  symbolize_session(s, SymbolizeOptions{});
  EXPECT_EQ(names(s, in_lib), std::vector<std::string>{"shared_private_step"});
  EXPECT_EQ(names(s, in_exe), std::vector<std::string>{"main"});
}

TEST(SymbolizeSession, KernelFramesFromTheArchiveKallsyms) {
  model::Session s;
  model::SessionBuilder b(s);
  s.kernel_symbols = {{0xffffffff81000000, "_stext", "", 'T'},
                      {0xffffffff81100000, "do_syscall_64", "", 'T'},
                      {0xffffffffc0001000, "xfs_file_read_iter", "xfs", 't'}};
  model::Mapping k;
  k.kind = model::MappingKind::kernel;
  k.start = 0xffffffff81000000;
  k.end = 0xffffffff82000000;
  k.path = "[kernel.kallsyms]";
  uint64_t km = b.mapping(k);
  uint64_t sys = b.address_location(km, 0xffffffff81100042, FrameKind::kernel, true);
  uint64_t mod = b.address_location(0, 0xffffffffc0001010, FrameKind::kernel, true);
  uint64_t below = b.address_location(0, 0xffffffff80000000, FrameKind::kernel, true);
  symbolize_session(s, SymbolizeOptions{});
  EXPECT_EQ(names(s, sys), std::vector<std::string>{"do_syscall_64"});
  EXPECT_EQ(names(s, mod), std::vector<std::string>{"xfs_file_read_iter [xfs]"});
  EXPECT_EQ(s.location(mod).kind, FrameKind::kernel);
  EXPECT_EQ(s.location(below).status, SymbolStatus::no_symbol);

  model::Session bare;
  model::SessionBuilder bb(bare);
  uint64_t lone = bb.address_location(0, 0xffffffff81100042, FrameKind::kernel, false);
  symbolize_session(bare, SymbolizeOptions{});
  EXPECT_EQ(bare.location(lone).status, SymbolStatus::no_file);
}

TEST(SymbolizeSession, JitFramesFromThePerfMapOfTheSamePid) {
  model::Session s;
  model::SessionBuilder b(s);
  s.jit_maps = {{42,
                 "/tmp/perf-42.map",
                 {{0x7000, 0x100, "LazyCompile:*fib app.js:1"}, {0x7080, 0x10, "stub"}}}};
  model::Mapping m;
  m.pid = 42;
  m.kind = model::MappingKind::anonymous;
  m.start = 0x7000;
  m.end = 0x8000;
  model::Mapping other = m;
  other.pid = 43;
  uint64_t mine = b.mapping(m), theirs = b.mapping(other);
  uint64_t fib = b.address_location(mine, 0x7010, FrameKind::unknown, false);
  uint64_t stub = b.address_location(mine, 0x7088, FrameKind::unknown, true);
  uint64_t gap = b.address_location(mine, 0x7400, FrameKind::unknown, true);
  uint64_t foreign = b.address_location(theirs, 0x7010, FrameKind::unknown, false);
  uint64_t nowhere = b.address_location(0, 0x1234, FrameKind::unknown, false);
  symbolize_session(s, SymbolizeOptions{});
  EXPECT_EQ(names(s, fib), std::vector<std::string>{"LazyCompile:*fib app.js:1"});
  EXPECT_EQ(s.location(fib).kind, FrameKind::jit);
  EXPECT_EQ(names(s, stub), std::vector<std::string>{"stub"});  // the later entry wins
  EXPECT_EQ(s.location(gap).status, SymbolStatus::no_symbol);
  EXPECT_EQ(s.location(foreign).status, SymbolStatus::no_file);
  EXPECT_EQ(s.location(nowhere).status, SymbolStatus::unmapped);
  EXPECT_EQ(s.counter("symbolize.unmapped"), 1);
}

TEST(SymbolizeSession, SecondRunIsANoOpAndAnotherStoreFillsOnlyTheGaps) {
  TempDir dir;
  copy_file(fixture("sym_nofp"), dir / "other");
  ASSERT_EQ(sh("objcopy --only-keep-debug " + (dir / "other") + " " + (dir / "other.debug")), 0);
  add_to_store(dir / "store", dir / "other.debug");
  model::Session s;
  model::SessionBuilder b(s);
  Loaded a = load(b, fixture("sym_fp"), kPieBase, 100);
  Loaded o = load(b, dir / "other", kPieBase, 101);
  uint64_t la = add_location(b, a, symbol(fixture("sym_fp"), "fp_leaf").address + 4, false);
  uint64_t lo = add_location(b, o, symbol(dir / "other", "fp_outer").address + 4, false);
  ASSERT_EQ(sh("rm " + (dir / "other")), 0);

  symbolize_session(s, SymbolizeOptions{});
  EXPECT_EQ(s.location(la).status, SymbolStatus::resolved);
  EXPECT_EQ(s.location(lo).status, SymbolStatus::no_file);
  std::string first = encode(s);
  symbolize_session(s, SymbolizeOptions{});
  EXPECT_EQ(encode(s), first) << "re-running changed a symbolized session";

  size_t functions = s.functions.size();
  auto report = symbolize_session(s, stores_only({dir / "store"}));
  EXPECT_EQ(report.newly_resolved, 1u);
  EXPECT_EQ(names(s, lo), std::vector<std::string>{"fp_outer"});
  EXPECT_EQ(names(s, la), std::vector<std::string>{"fp_leaf"});
  EXPECT_EQ(s.functions.size(), functions + 1);
}

TEST(SymbolizeSession, SameOutputForOneAndManyJobs) {
  auto build = [] {
    model::Session s;
    model::SessionBuilder b(s);
    int32_t pid = 100;
    for (const char* name :
         {"sym_fp", "sym_nofp", "sym_inline", "sym_cpptempl", "libsym_shared.so"}) {
      std::string bin = fixture(name);
      Loaded l = load(b, bin, kPieBase + (static_cast<uint64_t>(pid) << 32), pid);
      for (const char* fn :
           {"main", "fp_leaf", "inl_outer", "_ZN2ns5StackIiE4pushERKi", "shared_work"}) {
        Symbol sym = symbol(bin, fn);
        if (sym.address != 0) add_location(b, l, sym.address + 3, true);
      }
      ++pid;
    }
    return s;
  };
  model::Session one = build(), many = build();
  SymbolizeOptions o1, o4;
  o4.jobs = 4;
  o1.resolver.lines = o4.resolver.lines = true;
  symbolize_session(one, o1);
  symbolize_session(many, o4);
  EXPECT_EQ(encode(one), encode(many));
  EXPECT_EQ(one.counter("symbolize.resolved"), static_cast<int64_t>(one.locations.size()));
}

TEST(SymbolizeSession, ResultsSurviveTheArchiveRoundTrip) {
  model::Session s;
  model::SessionBuilder b(s);
  Loaded l = load(b, fixture("sym_inline"), kPieBase);
  Symbol outer = symbol(fixture("sym_inline"), "inl_outer");
  std::vector<uint64_t> ids;
  for (uint64_t a = outer.address; a < outer.address + outer.size; a += 2)
    ids.push_back(add_location(b, l, a, false));
  SymbolizeOptions o;
  o.resolver.lines = true;
  symbolize_session(s, o);
  auto in = archive::InputStream::from_memory(encode(s));
  auto back = archive::read_archive(*in);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->sessions.size(), 1u);
  const model::Session& r = back->sessions[0];
  EXPECT_TRUE(r.header.symbolized);
  size_t chains = 0;
  for (uint64_t id : ids) {
    ASSERT_EQ(names(r, id), names(s, id));
    const auto& lines = r.location(id).lines;
    if (lines.size() == 3) {
      ++chains;
      EXPECT_FALSE(lines[0].inlined);
      EXPECT_TRUE(lines[1].inlined);
      EXPECT_TRUE(lines[2].inlined);
      EXPECT_EQ(r.function(lines[2].function_id).name, "inl_inner");
      EXPECT_NE(r.function(lines[2].function_id).file_name.find("inline.c"), std::string::npos);
    }
  }
  EXPECT_GT(chains, 0u);
}

#ifdef GP_SYM_HAVE_GO
TEST(SymbolizeSession, GoFramesAreOfKindGo) {
  for (const char* name : {"sym_go", "sym_go_stripped"}) {
    model::Session s;
    model::SessionBuilder b(s);
    Loaded l = load(b, fixture(name), 0);  // Go links ET_EXEC by default
    uint64_t work = add_location(b, l, symbol(fixture("sym_go"), "main.work").address + 8, false);
    uint64_t outer = add_location(b, l, symbol(fixture("sym_go"), "main.outer").address + 8, true);
    symbolize_session(s, SymbolizeOptions{});
    EXPECT_EQ(names(s, work).back(), "main.work") << name;
    EXPECT_EQ(names(s, outer).back(), "main.outer") << name;
    EXPECT_EQ(s.location(work).kind, FrameKind::go) << name;
  }
}
#endif

}  // namespace
}  // namespace gp::test::symbolize
