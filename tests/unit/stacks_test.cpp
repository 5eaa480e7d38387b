// fold_stacks: frame naming (symbolized, python, unsymbolized, kernel), process frames, idle,
// error frames, user/kernel views, aggregation across sessions and deterministic order.

#include <gtest/gtest.h>

#include "gp/fold/stacks.h"
#include "gp/model/builder.h"

namespace gp::test::fold {
namespace {

using gp::fold::FoldedStack;
using gp::fold::StackOptions;
using model::FrameKind;

std::string text(const FoldedStack& st) {
  std::string out;
  for (const auto& f : st.frames) {
    if (!out.empty()) out += ';';
    out += f.name + gp::fold::kind_suffix(f.kind);
  }
  return out + " " + std::to_string(st.count);
}

std::vector<std::string> texts(const model::Archive& a, const StackOptions& o = {}) {
  std::vector<std::string> out;
  for (const auto& st : gp::fold::fold_stacks(a, o)) out.push_back(text(st));
  return out;
}

// A session with one native process whose stack mixes every kind of location.
struct Fixture {
  model::Archive archive;
  model::Session& s = archive.sessions.emplace_back();
  model::SessionBuilder b{s};
  uint64_t exe = 0, kernel = 0;

  Fixture() {
    model::Process p;
    p.pid = 100;
    p.comm = "app";
    b.process(p);
    b.thread(101, 100, "app-worker");
    model::Mapping m;
    m.pid = 100;
    m.start = 0x400000;
    m.end = 0x500000;
    m.path = "/usr/bin/app";
    exe = b.mapping(m);
    model::Mapping k;
    k.pid = -1;
    k.start = 0xffffffff81000000;
    k.end = 0xffffffff82000000;
    k.path = "[kernel.kallsyms]";
    k.kind = model::MappingKind::kernel;
    kernel = b.mapping(k);
  }

  // A resolved native location: `outer` with `inner` inlined into it.
  uint64_t resolved(const char* outer, const char* inner) {
    uint64_t id =
        b.address_location(exe, 0x401000 + s.locations.size() * 16, FrameKind::native, true);
    model::Location& loc = s.location(id);
    loc.status = model::SymbolStatus::resolved;
    loc.lines.push_back({b.function(outer), 10, 0, false});
    if (inner != nullptr) loc.lines.push_back({b.function(inner), 20, 0, true});
    return id;
  }
  uint64_t raw_user() { return b.address_location(exe, 0x480000, FrameKind::native, true); }
  uint64_t raw_kernel() {
    return b.address_location(kernel, 0xffffffff81001000, FrameKind::kernel, true);
  }
  uint64_t kernel_sym(const char* name) {
    return b.symbolic_location(FrameKind::kernel, b.function(name), 0, kernel);
  }
};

TEST(FoldStacks, NamesEveryKindOfLocationRootFirst) {
  Fixture fx;
  uint64_t unmapped = fx.b.address_location(0, 0x1234, FrameKind::unknown, true);
  // leaf first: kernel unknown, kernel symbol, raw user in exe, unmapped, main (with inline)
  uint64_t st = fx.b.stack({fx.raw_kernel(), fx.kernel_sym("do_syscall_64"), fx.raw_user(),
                            unmapped, fx.resolved("main", "helper")});
  fx.b.add_sample(100, 100, st, 7);
  EXPECT_EQ(texts(fx.archive),
            std::vector<std::string>{
                "app;main;helper_[i];[unknown];(/usr/bin/app);do_syscall_64_[k];[unknown]_[k] 7"});
  auto folded = gp::fold::fold_stacks(fx.archive, {});
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(folded[0].frames[0].kind, FrameKind::pseudo);
}

TEST(FoldStacks, SpellsBracketedDsosAsPerfDoes) {
  Fixture fx;
  model::Mapping v;
  v.pid = 100;
  v.start = 0x7fff0000;
  v.end = 0x7fff2000;
  v.path = "[vdso]";
  v.kind = model::MappingKind::vdso;
  uint64_t vdso = fx.b.mapping(v);
  fx.b.add_sample(
      100, 100, fx.b.stack({fx.b.address_location(vdso, 0x7fff0100, FrameKind::native, false)}), 1);
  EXPECT_EQ(texts(fx.archive), std::vector<std::string>{"app;(vdso) 1"});
}

// --insert-dso-name, spelled as gProfiler's collapse_stack (gprofiler/utils/perf.py) does with
// insert_dso_name: a symbolized user frame "sym (dso)", a bracketed DSO without its brackets
// ("[vdso]" → "vdso"); an unsymbolized frame stays "(dso)" and kernel frames take no DSO.
TEST(FoldStacks, InsertDsoNameSpellsNativeFramesAsGProfiler) {
  Fixture fx;
  model::Mapping v;
  v.pid = 100;
  v.start = 0x7fff0000;
  v.end = 0x7fff2000;
  v.path = "[vdso]";
  v.kind = model::MappingKind::vdso;
  uint64_t vdso = fx.b.mapping(v);
  uint64_t gettime = fx.b.address_location(vdso, 0x7fff0100, FrameKind::native, true);
  fx.s.location(gettime).status = model::SymbolStatus::resolved;
  fx.s.location(gettime).lines.push_back({fx.b.function("__vdso_clock_gettime"), 0, 0, false});
  uint64_t st = fx.b.stack(
      {fx.kernel_sym("do_syscall_64"), gettime, fx.raw_user(), fx.resolved("main", nullptr)});
  fx.b.add_sample(100, 100, st, 3);
  StackOptions o;
  EXPECT_EQ(
      texts(fx.archive, o),
      std::vector<std::string>{"app;main;(/usr/bin/app);__vdso_clock_gettime;do_syscall_64_[k] 3"});
  o.insert_dso_name = true;
  EXPECT_EQ(texts(fx.archive, o),
            std::vector<std::string>{"app;main (/usr/bin/app);(/usr/bin/app);"
                                     "__vdso_clock_gettime (vdso);do_syscall_64_[k] 3"});
}

TEST(FoldStacks, NamesPythonFunctionsLikePySpy) {
  Fixture fx;
  uint64_t f = fx.b.function("Burner.burn", "/app/lister.py", 12);
  uint64_t g = fx.b.function("<module>", "/app/lister.py", 0);
  uint64_t py1 = fx.b.symbolic_location(FrameKind::python, f, 15);
  uint64_t py2 = fx.b.symbolic_location(FrameKind::python, g, 3);
  fx.b.add_sample(100, 100, fx.b.stack({py1, py2}), 2);
  EXPECT_EQ(texts(fx.archive),
            std::vector<std::string>{
                "app;<module> (/app/lister.py:3)_[p];Burner.burn (/app/lister.py:12)_[p] 2"});
}

// gProfiler's package suffix goes after the line, inside the parentheses; a frame without a
// line gets none (gProfiler's pattern needs "file.py:line").
TEST(FoldStacks, NamesPythonPackagesAfterTheLineAsGProfilerDoes) {
  Fixture fx;
  uint64_t f = fx.b.function("get", "/venv/lib/python3.11/site-packages/requests/api.py", 62, {},
                             "requests==2.31.0");
  uint64_t g = fx.b.function("Thread.run", "/usr/lib/python3.11/threading.py", 0, {},
                             "standard-library==3.11.2");
  uint64_t h = fx.b.function("<module>", "/srv/app.py", 0, {}, "x==1");
  uint64_t loc_f = fx.b.symbolic_location(FrameKind::python, f, 70);
  uint64_t loc_g = fx.b.symbolic_location(FrameKind::python, g, 975);
  uint64_t loc_h = fx.b.symbolic_location(FrameKind::python, h, 0);
  fx.b.add_sample(100, 100, fx.b.stack({loc_f, loc_g, loc_h}), 2);
  EXPECT_EQ(texts(fx.archive),
            std::vector<std::string>{
                "app;<module> (/srv/app.py)_[p];"
                "Thread.run (/usr/lib/python3.11/threading.py:975 [standard-library==3.11.2])_[p];"
                "get (/venv/lib/python3.11/site-packages/requests/api.py:62 "
                "[requests==2.31.0])_[p] 2"});
}

TEST(FoldStacks, ProcessFrameUsesCommThenThreadCommThenPid) {
  Fixture fx;
  uint64_t st = fx.b.stack({fx.resolved("main", nullptr)});
  fx.b.add_sample(100, 101, st, 1);  // known process
  fx.b.thread(301, 300, "lonely");
  fx.b.add_sample(300, 301, st, 2);  // only a thread entry
  fx.b.add_sample(400, 400, st, 3);  // nothing known
  fx.b.add_sample(0, 0, st, 4);      // idle
  EXPECT_EQ(texts(fx.archive), (std::vector<std::string>{"[pid 400];main 3", "app;main 1",
                                                         "lonely;main 2", "swapper;main 4"}));
  StackOptions o;
  o.include_idle = false;
  o.with_tid = true;
  EXPECT_EQ(texts(fx.archive, o),
            (std::vector<std::string>{"[pid 400]-400/400;main 3", "app-100/101;main 1",
                                      "lonely-300/301;main 2"}));
  o.with_tid = false;
  o.with_pid = true;
  EXPECT_EQ(texts(fx.archive, o)[1], "app-100;main 1");
  o.process_frame = false;
  EXPECT_EQ(texts(fx.archive, o), std::vector<std::string>{"main 6"});
}

TEST(FoldStacks, ProcessFrameIsTheCommTheSampleWasTakenUnder) {
  // A shell that exec'd "prog": its samples before the exec say "run", the newest Process
  // entry (and the samples after it) "prog".
  Fixture fx;
  model::Process p;
  p.pid = 100;
  p.comm = "prog";
  fx.b.process(p);
  uint64_t before = fx.b.stack({fx.resolved("__execve", nullptr)});
  uint64_t after = fx.b.stack({fx.resolved("main", nullptr)});
  fx.b.add_sample(100, 100, before, 2, 0, -1, "run");
  fx.b.add_sample(100, 100, after, 3, 0, -1, "prog");
  fx.b.add_sample(100, 100, after, 1, 0, -1, "run");  // same stack, other name: its own line
  EXPECT_EQ(texts(fx.archive),
            (std::vector<std::string>{"prog;main 3", "run;__execve 2", "run;main 1"}));
  StackOptions o;
  o.with_pid = true;
  EXPECT_EQ(texts(fx.archive, o)[1], "run-100;__execve 2");
}

TEST(FoldStacks, InsertsErrorFrameAfterComm) {
  Fixture fx;
  model::Process p = fx.s.processes[0];
  p.error_frame = "[Profiling skipped: profiled-oom]";
  fx.b.process(p);
  fx.b.add_sample(100, 100, fx.b.stack({fx.resolved("main", nullptr)}), 3);
  EXPECT_EQ(texts(fx.archive),
            std::vector<std::string>{"app;[Profiling skipped: profiled-oom];main 3"});
}

TEST(FoldStacks, UserOnlyAndKernelOnlyViews) {
  Fixture fx;
  uint64_t mixed = fx.b.stack(
      {fx.kernel_sym("schedule"), fx.kernel_sym("sys_read"), fx.resolved("main", nullptr)});
  uint64_t user = fx.b.stack({fx.resolved("compute", nullptr)});
  fx.b.add_sample(100, 100, mixed, 2);
  fx.b.add_sample(100, 100, user, 5);
  StackOptions o;
  o.user_only = true;
  EXPECT_EQ(texts(fx.archive, o), (std::vector<std::string>{"app;compute 5", "app;main 2"}));
  o.user_only = false;
  o.kernel_only = true;
  EXPECT_EQ(texts(fx.archive, o), std::vector<std::string>{"app;sys_read_[k];schedule_[k] 2"});
}

TEST(FoldStacks, AggregatesAcrossSessionsAndSortsDeterministically) {
  Fixture a, b;
  a.b.add_sample(100, 100, a.b.stack({a.resolved("zeta", nullptr)}), 1);
  a.b.add_sample(100, 100, a.b.stack({a.resolved("alpha", nullptr)}), 2);
  b.b.add_sample(100, 101, b.b.stack({b.resolved("zeta", nullptr)}), 4);
  model::Archive both;
  both.sessions.push_back(a.s);
  both.sessions.push_back(b.s);
  EXPECT_EQ(texts(both), (std::vector<std::string>{"app;alpha 2", "app;zeta 5"}));
}

TEST(FoldStacks, KindSuffixesMatchGprofiler) {
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::kernel), "_[k]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::java), "_[j]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::python), "_[p]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::python_native), "_[pn]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::ruby), "_[rb]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::php), "_[php]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::dotnet), "_[net]");
  EXPECT_STREQ(gp::fold::kind_suffix(FrameKind::inlined), "_[i]");
  for (auto k : {FrameKind::native, FrameKind::go, FrameKind::node, FrameKind::jit,
                 FrameKind::unknown, FrameKind::pseudo})
    EXPECT_STREQ(gp::fold::kind_suffix(k), "");
}

}  // namespace
}  // namespace gp::test::fold
