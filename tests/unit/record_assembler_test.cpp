// SessionAssembler: raw sampled addresses -> processes, hit mappings, locations, stacks.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>

#include "gp/archive/byte_io.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/record/assembler.h"

namespace gp::test::record {
namespace {

using gp::record::RawSample;
using gp::record::SessionAssembler;

model::Mapping user_map(int32_t pid, uint64_t start, uint64_t end, uint64_t offset,
                        const std::string& path) {
  model::Mapping m;
  m.pid = pid;
  m.start = start;
  m.end = end;
  m.file_offset = offset;
  m.path = path;
  m.build_id = "\x01\x02\x03";
  return m;
}

// A /proc stand-in: processes that exist, with mappings that tests change (dlopen, exec).
class FakeSource : public gp::record::ProcessSource {
 public:
  std::map<int32_t, model::Process> procs;
  std::map<int32_t, std::vector<model::Mapping>> maps;
  int snapshot_calls = 0;
  int mapping_calls = 0;

  Result<model::Process> snapshot(int32_t pid) override {
    ++snapshot_calls;
    auto it = procs.find(pid);
    if (it == procs.end()) return make_error("process exited");
    return it->second;
  }
  Result<std::vector<model::Mapping>> mappings(int32_t pid) override {
    ++mapping_calls;
    auto it = maps.find(pid);
    if (it == maps.end()) return make_error("process exited");
    return it->second;
  }
  bool alive(int32_t pid) override { return procs.count(pid) != 0; }
  void add(int32_t pid, const std::string& comm, std::vector<model::Mapping> m) {
    model::Process p;
    p.pid = pid;
    p.comm = comm;
    procs[pid] = p;
    maps[pid] = std::move(m);
  }
};

RawSample sample(int32_t pid, std::vector<uint64_t> user, std::vector<uint64_t> kernel = {},
                 uint64_t count = 1) {
  RawSample s;
  s.pid = pid;
  s.tid = pid;
  s.comm = "worker";
  s.user_ips = std::move(user);
  s.kernel_ips = std::move(kernel);
  s.count = count;
  return s;
}

TEST(SessionAssembler, NormalizesUserAddressesAgainstTheCoveringMapping) {
  FakeSource src;
  src.add(10, "app",
          {user_map(10, 0x1000, 0x2000, 0x0, "/bin/app"),
           user_map(10, 0x5000, 0x6000, 0x3000, "/lib/libc.so")});
  SessionAssembler a(src, "KBID");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  a.add(sample(10, {0x5010, 0x1234}, {0xffffffff81000010, 0xffffffff81000200}, 3));

  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].count, 3u);
  const model::Stack& st = s.stack(s.samples[0].stack_id);
  ASSERT_EQ(st.location_ids.size(), 4u);
  // Kernel frames first (leaf first), then user frames.
  const auto& k0 = s.location(st.location_ids[0]);
  EXPECT_EQ(k0.kind, model::FrameKind::kernel);
  EXPECT_EQ(k0.address, 0xffffffff81000010u);
  EXPECT_FALSE(k0.is_return_address);
  EXPECT_TRUE(s.location(st.location_ids[1]).is_return_address);
  EXPECT_EQ(s.mapping(k0.mapping_id).kind, model::MappingKind::kernel);
  EXPECT_EQ(s.mapping(k0.mapping_id).build_id, "KBID");
  const auto& u0 = s.location(st.location_ids[2]);
  EXPECT_EQ(u0.kind, model::FrameKind::native);
  EXPECT_FALSE(u0.is_return_address);
  EXPECT_EQ(s.mapping(u0.mapping_id).path, "/lib/libc.so");
  EXPECT_EQ(u0.file_offset, 0x3010u);
  const auto& u1 = s.location(st.location_ids[3]);
  EXPECT_TRUE(u1.is_return_address);
  EXPECT_EQ(s.mapping(u1.mapping_id).path, "/bin/app");
  EXPECT_EQ(u1.file_offset, 0x234u);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].comm, "app");
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].comm, "worker");
  EXPECT_EQ(a.kernel_addresses().size(), 2u);
}

TEST(SessionAssembler, WritesOnlyMappingsThatSamplesHit) {
  FakeSource src;
  src.add(10, "app",
          {user_map(10, 0x1000, 0x2000, 0, "/bin/app"),
           user_map(10, 0x5000, 0x6000, 0, "/lib/unused.so")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.add(sample(10, {0x1100}));
  ASSERT_EQ(s.mappings.size(), 1u);
  EXPECT_EQ(s.mappings[0].path, "/bin/app");
}

TEST(SessionAssembler, ResnapshotsMappingsOnceWhenAnAddressIsUnknown) {
  FakeSource src;
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  // The library appears after the first snapshot (dlopen).
  src.maps[10].push_back(user_map(10, 0x7000, 0x8000, 0, "/tmp/libdlwork.so"));
  a.add(sample(10, {0x7100, 0x1100}));
  const auto& st = s.stack(s.samples[0].stack_id);
  EXPECT_EQ(s.mapping(s.location(st.location_ids[0]).mapping_id).path, "/tmp/libdlwork.so");
  EXPECT_EQ(a.resnapshots(), 1u);
  // A truly unmapped address stays unmapped and does not re-read /proc again in this drain.
  int calls = src.mapping_calls;
  a.add(sample(10, {0x9999}));
  a.add(sample(10, {0x9998}));
  EXPECT_EQ(src.mapping_calls, calls);
  EXPECT_EQ(s.location(s.stack(s.samples.back().stack_id).location_ids[0]).mapping_id, 0u);
}

TEST(SessionAssembler, AnAddressNoFreshReadCoversStopsReReadingTheMappings) {
  FakeSource src;
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  a.add(sample(10, {0x6d6d6f632f343937, 0x1100}));  // frame-pointer garbage under a real frame
  a.end_drain();
  EXPECT_EQ(a.resnapshots(), 1u);
  // The same garbage in every later drain (the stack repeats) costs no /proc read...
  for (int drain = 0; drain < 3; ++drain) {
    a.add(sample(10, {0x6d6d6f632f343937, 0x1100}));
    a.end_drain();
  }
  EXPECT_EQ(a.resnapshots(), 1u);
  // ...while a new address still finds a library loaded since (dlopen).
  src.maps[10].push_back(user_map(10, 0x7000, 0x8000, 0, "/tmp/libdlwork.so"));
  a.add(sample(10, {0x7100, 0x1100}));
  EXPECT_EQ(a.resnapshots(), 2u);
  EXPECT_EQ(
      s.mapping(s.location(s.stack(s.samples.back().stack_id).location_ids[0]).mapping_id).path,
      "/tmp/libdlwork.so");
}

TEST(SessionAssembler, KeepsAProcessThatExitedBeforeItsSnapshot) {
  FakeSource src;  // pid 42 is not there any more
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.add(sample(42, {0x1000}));
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid, 42);
  EXPECT_TRUE(s.processes[0].exited);
  EXPECT_EQ(s.processes[0].comm, "worker");
}

TEST(SessionAssembler, SnapshotKeptAfterTheProcessExits) {
  FakeSource src;
  src.add(10, "short", {user_map(10, 0x1000, 0x2000, 0, "/bin/short")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  src.procs.clear();  // gone before the drain
  src.maps.clear();
  a.add(sample(10, {0x1100}));
  EXPECT_EQ(s.processes[0].comm, "short");
  EXPECT_FALSE(s.processes[0].exited);
  EXPECT_EQ(s.mappings[0].path, "/bin/short");
}

TEST(SessionAssembler, ExecAppendsANewProcessEntry) {
  FakeSource src;
  src.add(10, "sh", {user_map(10, 0x1000, 0x2000, 0, "/bin/sh")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  a.add(sample(10, {0x1100}));
  src.add(10, "python3", {user_map(10, 0x3000, 0x4000, 0, "/usr/bin/python3")});
  a.on_process_event(10, true);
  a.add(sample(10, {0x3100}));
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.find_process(10)->comm, "python3");
}

TEST(SessionAssembler, TheIdleTaskOfEveryCpuIsOneSwapper) {
  FakeSource src;
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  for (const char* comm : {"swapper/0", "swapper/1"}) {
    RawSample idle = sample(0, {}, {0xffffffff81000000ULL});
    idle.comm = comm;  // the kernel names each CPU's idle task
    a.add(idle);
  }
  // One process, one name: the two CPUs' samples are one aggregate.
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].comm, "swapper");
  EXPECT_EQ(s.samples[0].count, 2u);
}

TEST(SessionAssembler, SamplesKeepTheCommOfTheirTimeAndStateTheirPeriod) {
  FakeSource src;
  src.add(10, "sh", {user_map(10, 0x1000, 0x2000, 0, "/bin/sh")});
  SessionAssembler a(src, "");
  model::Session s;
  s.header.sampling.event = "cpu-clock";
  s.header.sampling.frequency_hz = 250;  // 4 ms per sample
  a.begin_session(s);
  a.on_process_event(10, false);
  RawSample before = sample(10, {0x1100}, {}, 3);
  before.comm = "sh";
  a.add(before);
  src.add(10, "python3", {user_map(10, 0x3000, 0x4000, 0, "/usr/bin/python3")});
  a.on_process_event(10, true);
  RawSample after = sample(10, {0x3100}, {}, 2);
  after.comm = "python3";
  a.add(after);
  RawSample thread = sample(10, {0x3100});
  thread.tid = 11;
  thread.comm = "py-worker";  // a thread's own name is not the process's
  a.add(thread);
  ASSERT_EQ(s.samples.size(), 3u);
  EXPECT_EQ(s.samples[0].comm, "sh");
  EXPECT_EQ(s.samples[1].comm, "python3");
  EXPECT_EQ(s.samples[2].comm, "python3");
  EXPECT_EQ(s.samples[0].weight, 3u * 4'000'000);
  EXPECT_EQ(s.samples[1].weight, 2u * 4'000'000);
  model::Sampling faults;
  faults.event = "page-faults";
  faults.frequency_hz = 99;  // the kernel varies the period: unknown here
  EXPECT_EQ(gp::record::sample_period(faults), 0u);
  model::Sampling fixed;
  fixed.event = "cpu-clock";
  fixed.period = 1000;
  EXPECT_EQ(gp::record::sample_period(fixed), 1000u);
}

TEST(SessionAssembler, ExecIsSnapshottedOnlyWhenTheNewImageIsSampled) {
  FakeSource src;
  src.add(10, "sh", {user_map(10, 0x1000, 0x2000, 0, "/bin/sh")});
  src.add(11, "wrapper", {user_map(11, 0x1000, 0x2000, 0, "/bin/wrapper")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(11, true);  // never sampled: its exec costs nothing
  a.on_process_event(11, true);
  EXPECT_EQ(src.snapshot_calls, 0);
  a.on_process_event(10, false);
  src.add(10, "python3", {user_map(10, 0x3000, 0x4000, 0, "/usr/bin/python3")});
  a.on_process_event(10, true);
  a.on_process_event(10, true);  // exec chains (wrapper scripts) are snapshotted once
  EXPECT_EQ(src.snapshot_calls, 1);
  a.on_process_event(10, false);  // the first sample of the new image
  EXPECT_EQ(src.snapshot_calls, 2);
  a.add(sample(10, {0x3100}));
  EXPECT_EQ(src.snapshot_calls, 2);
  EXPECT_EQ(s.find_process(10)->comm, "python3");
}

TEST(SessionAssembler, SampleTakenBeforeAnExecButDrainedAfterKeepsTheOldImage) {
  FakeSource src;
  src.add(10, "sh", {user_map(10, 0x1000, 0x2000, 0, "/bin/sh")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  src.add(10, "python3", {user_map(10, 0x3000, 0x4000, 0, "/usr/bin/python3")});
  a.on_process_event(10, true);
  // The kernel aggregated both samples in one interval; the drain comes after the exec.
  a.add(sample(10, {0x1100}));
  a.add(sample(10, {0x3100}));
  auto path_of = [&](size_t i) {
    return s.mapping(s.location(s.stack(s.samples[i].stack_id).location_ids[0]).mapping_id).path;
  };
  EXPECT_EQ(path_of(0), "/bin/sh");
  EXPECT_EQ(path_of(1), "/usr/bin/python3");
}

RawSample keyed(int32_t pid, std::vector<uint64_t> user, uint64_t user_key) {
  RawSample s = sample(pid, std::move(user));
  s.user_stack_key = user_key;
  return s;
}

std::string frame_path(const model::Session& s, size_t sample_index, size_t frame) {
  const auto& st = s.stack(s.samples[sample_index].stack_id);
  return s.mapping(s.location(st.location_ids.at(frame)).mapping_id).path;
}

std::string leaf_path(const model::Session& s, size_t sample_index) {
  return frame_path(s, sample_index, 0);
}

// One process, pid 10, whose samples carry the BPF sampler's stack keys.
class KnownStacks : public ::testing::Test {
 protected:
  void start(std::vector<model::Mapping> maps) {
    src.add(10, "app", std::move(maps));
    a.begin_session(s);
    a.on_process_event(10, false);
  }
  FakeSource src;
  SessionAssembler a{src, ""};
  model::Session s;
};

TEST_F(KnownStacks, AStackTheSamplerNamedBeforeIsNotInternedAgain) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  a.add(keyed(10, {0x1100, 0x1200}, 77));
  a.end_drain();
  size_t locations = s.locations.size(), stacks = s.stacks.size();
  // The sampler delivers the same key with (what it says are) the same frames: the stored
  // stack is reused without looking at the frames.
  a.add(keyed(10, {0x1100, 0x1200}, 77));
  EXPECT_EQ(s.samples[1].stack_id, s.samples[0].stack_id);
  EXPECT_EQ(s.locations.size(), locations);
  EXPECT_EQ(s.stacks.size(), stacks);
  // Another key is interned from its frames.
  a.add(keyed(10, {0x1300}, 78));
  EXPECT_NE(s.samples[2].stack_id, s.samples[0].stack_id);
}

// A sampler that gives frames on demand is asked for them only for a stack the session does not
// know yet; the frames' end goes on the stack, and a stack it has no frames for is dropped.
TEST_F(KnownStacks, FramesGivenOnDemandAreLoadedOncePerStack) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  int loads = 0;
  RawSample lazy;
  lazy.pid = lazy.tid = 10;
  lazy.comm = "app";
  lazy.count = 1;
  lazy.user_stack_key = 77;
  lazy.load_frames = [&](RawSample& frames) {
    ++loads;
    if (lazy.user_stack_key == 99) return;  // the sampler lost this one
    frames.user_ips = {0x1100, static_cast<uint64_t>(0x1000 + lazy.user_stack_key)};
    frames.user_end = model::StackEnd::complete;
  };
  a.add(lazy);
  a.end_drain();
  a.add(lazy);  // known: not loaded again
  lazy.user_stack_key = 78;
  a.add(lazy);
  lazy.user_stack_key = 99;
  a.add(lazy);  // no frames: dropped
  lazy.user_stack_key = 0;
  a.add(lazy);  // no stack at all: dropped without asking
  EXPECT_EQ(loads, 3);
  ASSERT_EQ(s.samples.size(), 3u);
  EXPECT_EQ(s.samples[1].stack_id, s.samples[0].stack_id);
  EXPECT_NE(s.samples[2].stack_id, s.samples[0].stack_id);
  EXPECT_EQ(s.stack(s.samples[0].stack_id).end, model::StackEnd::complete);
  EXPECT_EQ(s.stack(s.samples[0].stack_id).location_ids.size(), 2u);
}

// The user stack's end goes on the stack; the same frames (and keys) with another end are
// another stack, also when the first one was cached under the sampler's keys.
TEST_F(KnownStacks, KeepTheUserStacksEndAndTellEndsApart) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  RawSample cut = keyed(10, {0x1100, 0x1200}, 77);
  cut.user_end = model::StackEnd::truncated;
  RawSample whole = cut;
  whole.user_end = model::StackEnd::complete;
  a.add(cut);
  a.end_drain();
  a.add(cut);
  a.add(whole);
  a.add(keyed(10, {0x1100, 0x1200}, 77));  // a frame-pointer walk: unknown
  ASSERT_EQ(s.samples.size(), 4u);
  EXPECT_EQ(s.samples[1].stack_id, s.samples[0].stack_id);
  EXPECT_EQ(s.stack(s.samples[0].stack_id).end, model::StackEnd::truncated);
  EXPECT_EQ(s.stack(s.samples[2].stack_id).end, model::StackEnd::complete);
  EXPECT_EQ(s.stack(s.samples[3].stack_id).end, model::StackEnd::unknown);
  EXPECT_EQ(s.stacks.size(), 3u);
  EXPECT_EQ(s.stack(s.samples[2].stack_id).location_ids,
            s.stack(s.samples[0].stack_id).location_ids);
}

TEST_F(KnownStacks, AKnownStackResolvesInTheNewImageAfterAnExec) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/sh")});
  a.add(keyed(10, {0x1100}, 77));
  a.end_drain();
  // The new image maps the same addresses; the frames hash to the same key.
  src.add(10, "new", {user_map(10, 0x1000, 0x2000, 0, "/usr/bin/new")});
  a.on_process_event(10, true);
  a.on_process_event(10, false);
  a.add(keyed(10, {0x1100}, 77));
  EXPECT_EQ(leaf_path(s, 0), "/bin/sh");
  EXPECT_EQ(leaf_path(s, 1), "/usr/bin/new");
}

TEST_F(KnownStacks, AKnownStackResolvesInTheMappingsReadAfterALibraryWasReplaced) {
  start(
      {user_map(10, 0x1000, 0x2000, 0, "/bin/app"), user_map(10, 0x7000, 0x8000, 0, "/lib/a.so")});
  a.add(keyed(10, {0x7100, 0x1100}, 77));
  a.end_drain();
  // dlclose(a.so), dlopen(b.so) at the same address, dlopen(c.so): a frame in c.so re-reads
  // the mappings.
  src.maps[10] = {user_map(10, 0x1000, 0x2000, 0, "/bin/app"),
                  user_map(10, 0x7000, 0x8000, 0, "/lib/b.so"),
                  user_map(10, 0x9000, 0xa000, 0, "/lib/c.so")};
  a.add(keyed(10, {0x9100, 0x1100}, 78));
  a.add(keyed(10, {0x7100, 0x1100}, 77));
  EXPECT_EQ(leaf_path(s, 0), "/lib/a.so");
  EXPECT_EQ(leaf_path(s, 1), "/lib/c.so");
  EXPECT_EQ(leaf_path(s, 2), "/lib/b.so");
}

// A new stack mostly repeats return addresses interned before (its leaf is new): those resolve
// in the process's mappings as they are now, and in the session being written.
TEST_F(KnownStacks, AReturnAddressInternedBeforeResolvesInTheNewImageAfterAnExec) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/sh")});
  a.add(keyed(10, {0x1100, 0x1200}, 77));
  a.add(keyed(10, {0x1300, 0x1200}, 78));
  a.end_drain();
  src.add(10, "new", {user_map(10, 0x1000, 0x2000, 0, "/usr/bin/new")});
  a.on_process_event(10, true);
  a.on_process_event(10, false);
  a.add(keyed(10, {0x1400, 0x1200}, 79));
  EXPECT_EQ(frame_path(s, 1, 1), "/bin/sh");
  EXPECT_EQ(frame_path(s, 2, 1), "/usr/bin/new");
  EXPECT_EQ(s.stack(s.samples[1].stack_id).location_ids[1],
            s.stack(s.samples[0].stack_id).location_ids[1]);
}

// A frame in anonymous executable memory (JIT code) makes its process a candidate for a perf map
// copy in that drain, also when the frame is a return address interned in an earlier drain.
TEST_F(KnownStacks, AReturnAddressInJitCodeMarksItsProcessInEveryDrain) {
  model::Mapping jit = user_map(10, 0x7000, 0x8000, 0, "");
  jit.kind = model::MappingKind::anonymous;
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app"), jit});
  a.add(keyed(10, {0x1100, 0x7100}, 77));
  EXPECT_EQ(a.jit_candidates(), (std::set<int32_t>{10}));
  a.end_drain();
  a.add(keyed(10, {0x1200, 0x1300}, 78));  // no JIT frame
  EXPECT_TRUE(a.jit_candidates().empty());
  a.end_drain();
  a.add(keyed(10, {0x1400, 0x7100}, 79));  // a new stack, its JIT caller known by address
  EXPECT_EQ(a.jit_candidates(), (std::set<int32_t>{10}));
  a.end_drain();
  a.add(keyed(10, {0x1100, 0x7100}, 77));  // a known stack
  EXPECT_EQ(a.jit_candidates(), (std::set<int32_t>{10}));
}

TEST_F(KnownStacks, AReturnAddressInternedBeforeIsWrittenAgainInANewSession) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  a.add(keyed(10, {0x1100, 0x1200}, 77));
  a.end_drain();
  model::Session next;
  a.begin_session(next);
  a.add(keyed(10, {0x1300, 0x1200}, 78));
  ASSERT_EQ(next.locations.size(), 2u);
  EXPECT_EQ(frame_path(next, 0, 1), "/bin/app");
}

TEST_F(KnownStacks, AreWrittenAgainInANewSession) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  a.add(keyed(10, {0x1100}, 77));
  a.end_drain();
  model::Session next;
  a.begin_session(next);
  a.add(keyed(10, {0x1100}, 77));
  ASSERT_EQ(next.stacks.size(), 1u);
  EXPECT_EQ(leaf_path(next, 0), "/bin/app");
}

// Code without frame pointers leaves garbage "return addresses" in most of its stacks. Once a
// re-read of the mappings has not found them, those stacks are cached like any other: the
// sampler's key alone names them (here, later frames that differ show the cache was used).
TEST_F(KnownStacks, AStackWithGarbageAFreshReadDidNotCoverIsCached) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  a.add(keyed(10, {0x1100, 0x6d6d6f632f343937}, 77));
  a.end_drain();
  ASSERT_EQ(a.resnapshots(), 1u);
  a.add(keyed(10, {0x1100, 0x6d6d6f632f343938}, 77));
  EXPECT_EQ(s.samples[1].stack_id, s.samples[0].stack_id);
  EXPECT_EQ(a.resnapshots(), 1u);
}

// A cached stack with an address no mapping covered is looked at again once a library maps
// there (a later address re-reads the mappings, and they changed).
TEST_F(KnownStacks, AStackWithAnUnmappedAddressResolvesAfterALibraryLoadsThere) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  a.add(keyed(10, {0x7100, 0x1100}, 77));
  a.end_drain();
  src.maps[10].push_back(user_map(10, 0x7000, 0x8000, 0, "/lib/late.so"));
  a.add(keyed(10, {0x7300, 0x1100}, 78));
  a.add(keyed(10, {0x7100, 0x1100}, 77));
  EXPECT_EQ(a.resnapshots(), 2u);
  EXPECT_EQ(leaf_path(s, 2), "/lib/late.so");
}

// A re-read that finds the same mappings (it was garbage, not a new library) keeps the stacks
// known so far.
TEST_F(KnownStacks, SurviveAReReadThatFindsTheSameMappings) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  a.add(keyed(10, {0x1100, 0x1200}, 77));
  a.end_drain();
  a.add(keyed(10, {0x1100, 0x6d6d6f632f343937}, 78));  // garbage: a re-read, nothing new
  ASSERT_EQ(a.resnapshots(), 1u);
  a.add(keyed(10, {0x1300}, 77));
  EXPECT_EQ(s.samples[2].stack_id, s.samples[0].stack_id);
}

// A busy process built without frame pointers has new garbage return addresses in every
// drain: the re-reads of its mappings back off while they find nothing new, but a leaf (the
// CPU's own ip) in a library loaded meanwhile is found at once.
class MappingReReads : public KnownStacks {};

TEST_F(MappingReReads, ForGarbageReturnAddressesBackOff) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  for (uint64_t drain = 0; drain < 20; ++drain) {
    a.add(sample(10, {0x1100, 0x6d6d6f632f340000 + drain}));
    a.end_drain();
  }
  // Drains 0, 1, 3, 7 and 15 look again (waits of 1, 2, 4, 8, 16 drains).
  EXPECT_EQ(a.resnapshots(), 5u);
  src.maps[10].push_back(user_map(10, 0x7000, 0x8000, 0, "/tmp/libdlwork.so"));
  a.add(sample(10, {0x1100, 0x7100}));  // a return address there waits for the next re-read...
  EXPECT_EQ(a.resnapshots(), 5u);
  a.add(sample(10, {0x7200, 0x1100}));  // ...a leaf there does not
  EXPECT_EQ(a.resnapshots(), 6u);
  EXPECT_EQ(
      s.mapping(s.location(s.stack(s.samples.back().stack_id).location_ids[0]).mapping_id).path,
      "/tmp/libdlwork.so");
  a.end_drain();
  // The mappings changed: the next garbage address looks again at once.
  a.add(sample(10, {0x1100, 0x6d6d6f632f350000}));
  EXPECT_EQ(a.resnapshots(), 7u);
}

// A library loaded while the re-reads back off, seen only as a return address of a stack the
// sampler keys: the stack is not cached while its frame is unchecked, so the next re-read (at
// most the backoff later) still finds the library.
TEST_F(MappingReReads, AReturnAddressInALibraryLoadedDuringTheBackoffIsFoundLater) {
  start({user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  for (uint64_t drain = 0; drain < 4; ++drain) {  // re-reads at drains 0, 1 and 3: next at 7
    a.add(sample(10, {0x1100, 0x6d6d6f632f340000 + drain}));
    a.end_drain();
  }
  ASSERT_EQ(a.resnapshots(), 3u);
  src.maps[10].push_back(user_map(10, 0x7000, 0x8000, 0, "/tmp/libdlwork.so"));
  for (uint64_t drain = 4; drain < 8; ++drain) {
    a.add(keyed(10, {0x1100, 0x7100}, 77));
    a.end_drain();
  }
  EXPECT_EQ(a.resnapshots(), 4u);
  const auto& st = s.stack(s.samples.back().stack_id);
  EXPECT_EQ(s.mapping(s.location(st.location_ids[1]).mapping_id).path, "/tmp/libdlwork.so");
}

TEST(SessionAssembler, NewSessionWritesProcessesAndMappingsAgain) {
  FakeSource src;
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  SessionAssembler a(src, "");
  model::Session first, second;
  a.begin_session(first);
  a.add(sample(10, {0x1100}));
  a.begin_session(second);
  a.add(sample(10, {0x1100}));
  EXPECT_EQ(second.processes.size(), 1u);
  EXPECT_EQ(second.mappings.size(), 1u);
  EXPECT_EQ(src.snapshot_calls, 1);  // the snapshot itself is reused
}

TEST(SessionAssembler, ForgetsProcessesTheLastSessionDidNotSample) {
  FakeSource src;
  src.add(10, "busy", {user_map(10, 0x1000, 0x2000, 0, "/bin/busy")});
  src.add(11, "quiet", {user_map(11, 0x1000, 0x2000, 0, "/bin/quiet")});
  SessionAssembler a(src, "");
  model::Session first, second;
  a.begin_session(first);
  a.on_process_event(10, false);
  a.on_process_event(11, false);
  a.add(sample(10, {0x1100}));
  EXPECT_EQ(a.tracked_processes(), 2u);
  a.begin_session(second);
  EXPECT_EQ(a.tracked_processes(), 1u);
}

TEST(SessionAssembler, DropsSamplesWithoutFrames) {
  FakeSource src;
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.add(sample(0, {}, {}, 5));
  EXPECT_TRUE(s.samples.empty());
}

TEST(SessionAssembler, ChunksReadBackAsOneSession) {
  FakeSource src;
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  SessionAssembler a(src, "");
  model::Session s;
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, true);
  archive::Writer w(*out);
  a.begin_session(s);
  ASSERT_TRUE(w.begin_session(s).ok());
  a.add(sample(10, {0x1100, 0x1200}, {}, 2));
  ASSERT_TRUE(w.write_chunk(s).ok());
  a.end_drain();
  a.add(sample(10, {0x1100, 0x1200}, {}, 3));  // same stack in the next drain
  ASSERT_TRUE(w.end_session(s).ok());
  ASSERT_TRUE(out->close().ok());

  auto in = archive::InputStream::from_memory(bytes);
  auto archive = archive::read_archive(*in);
  ASSERT_TRUE(archive.ok()) << archive.error().message;
  ASSERT_EQ(archive->sessions.size(), 1u);
  const auto& r = archive->sessions[0];
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.total_samples(), 5u);
  EXPECT_EQ(r.stacks.size(), 1u);
  EXPECT_EQ(r.mappings.size(), 1u);
}

int64_t fake_now = 0;
int64_t fake_clock() { return fake_now; }

// A process announced while ld.so had mapped only the executable and itself.
void add_loader_only_process(FakeSource& src, int32_t pid, const std::string& exe) {
  src.add(pid, exe.substr(exe.rfind('/') + 1),
          {user_map(pid, 0x1000, 0x2000, 0, exe),
           user_map(pid, 0x3000, 0x4000, 0, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")});
  src.procs[pid].exe = exe;
}

// Starts a session on the fake clock at `now_ns` and announces pid's first sample.
void announce_at(SessionAssembler& a, model::Session& s, int32_t pid, int64_t now_ns) {
  a.set_clock(fake_clock);
  fake_now = now_ns;
  a.begin_session(s);
  a.on_process_event(pid, false);
}

TEST(SessionAssembler, LooksAgainShortlyAfterAnnouncingALibraryLessStartUp) {
  FakeSource src;
  add_loader_only_process(src, 10, "/bin/short");
  SessionAssembler a(src, "");
  model::Session s;
  announce_at(a, s, 10, 1000);
  EXPECT_EQ(a.next_follow_up_ns(), 1000 + SessionAssembler::kFollowUpDelayNs);
  src.maps[10].push_back(user_map(10, 0x7000, 0x9000, 0x1000, "/lib/libc.so.6"));
  a.follow_up(1000 + SessionAssembler::kFollowUpDelayNs - 1);  // not yet
  EXPECT_EQ(src.mapping_calls, 1);
  a.follow_up(1000 + SessionAssembler::kFollowUpDelayNs);
  EXPECT_EQ(src.mapping_calls, 2);
  EXPECT_EQ(a.next_follow_up_ns(), std::numeric_limits<int64_t>::max());
  src.procs.clear();  // gone before the drain: no re-read could find libc now
  src.maps.clear();
  a.add(sample(10, {0x7010, 0x1100}));
  const model::Stack& st = s.stack(s.samples[0].stack_id);
  EXPECT_EQ(s.mapping(s.location(st.location_ids[0]).mapping_id).path, "/lib/libc.so.6");
  EXPECT_EQ(s.location(st.location_ids[0]).file_offset, 0x1010u);
  EXPECT_EQ(a.follow_up_snapshots(), 1u);
}

TEST(SessionAssembler, LooksAgainWhileTheLoaderIsStillStarting) {
  FakeSource src;  // a slow start-up: libc is mapped only after the first follow-up
  add_loader_only_process(src, 10, "/bin/slow");
  SessionAssembler a(src, "");
  model::Session s;
  announce_at(a, s, 10, 1000);
  const int64_t first = 1000 + SessionAssembler::kFollowUpDelayNs;
  a.follow_up(first);  // still no libc: look again after the same delay
  EXPECT_EQ(src.mapping_calls, 2);
  EXPECT_EQ(a.next_follow_up_ns(), first + SessionAssembler::kFollowUpDelayNs);
  a.follow_up(first + SessionAssembler::kFollowUpDelayNs);  // and again
  EXPECT_EQ(src.mapping_calls, 3);
  EXPECT_EQ(a.next_follow_up_ns(), first + 2 * SessionAssembler::kFollowUpDelayNs);
  src.maps[10].push_back(user_map(10, 0x7000, 0x9000, 0x1000, "/lib/libc.so.6"));
  a.follow_up(first + 2 * SessionAssembler::kFollowUpDelayNs);
  EXPECT_EQ(src.mapping_calls, 4);
  EXPECT_EQ(a.next_follow_up_ns(), std::numeric_limits<int64_t>::max());  // libc is there now
  src.procs.clear();                                                      // gone before the drain
  src.maps.clear();
  a.add(sample(10, {0x7010, 0x1100}));
  const model::Stack& st = s.stack(s.samples[0].stack_id);
  EXPECT_EQ(s.mapping(s.location(st.location_ids[0]).mapping_id).path, "/lib/libc.so.6");
}

TEST(SessionAssembler, LooksAgainUntilLibcIsMappedAfterTheOtherDependencies) {
  FakeSource src;  // xz: ld.so maps liblzma first, then libc
  add_loader_only_process(src, 10, "/usr/bin/xz");
  src.maps[10].push_back(
      user_map(10, 0x5000, 0x6000, 0x1000, "/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1"));
  SessionAssembler a(src, "");
  model::Session s;
  announce_at(a, s, 10, 1000);
  const int64_t first = 1000 + SessionAssembler::kFollowUpDelayNs;
  EXPECT_EQ(a.next_follow_up_ns(), first);  // liblzma is there, libc not yet
  a.follow_up(first);
  EXPECT_EQ(src.mapping_calls, 2);
  EXPECT_EQ(a.next_follow_up_ns(), first + SessionAssembler::kFollowUpDelayNs);
  src.maps[10].push_back(
      user_map(10, 0x7000, 0x9000, 0x1000, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
  a.follow_up(first + SessionAssembler::kFollowUpDelayNs);
  EXPECT_EQ(src.mapping_calls, 3);
  EXPECT_EQ(a.next_follow_up_ns(), std::numeric_limits<int64_t>::max());
}

TEST(SessionAssembler, AFollowUpThatFindsTheSameMappingsKeepsTheKnownStacks) {
  FakeSource src;  // the loader still starting at every read: the mappings never change
  add_loader_only_process(src, 10, "/bin/slow");
  SessionAssembler a(src, "");
  model::Session s;
  announce_at(a, s, 10, 1000);
  a.add(keyed(10, {0x3100, 0x1100}, 77));
  a.end_drain();
  a.follow_up(1000 + SessionAssembler::kFollowUpDelayNs);
  ASSERT_EQ(a.follow_up_snapshots(), 1u);
  // The sampler's key still names the stack it named before: reused, not interned from frames.
  a.add(keyed(10, {0x3200}, 77));
  EXPECT_EQ(s.samples[1].stack_id, s.samples[0].stack_id);
}

TEST(SessionAssembler, AnExitingProcessesEmptyMappingsDoNotReplaceTheKnownOnes) {
  FakeSource src;
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  src.maps[10].clear();  // a zombie: its maps file is empty, its pid still there
  // The unmapped return address makes the drain read the mappings again; the frame after it
  // must still find the executable.
  a.add(sample(10, {0x1100, 0x9000, 0x1200}));
  EXPECT_EQ(src.mapping_calls, 2);
  const model::Stack& st = s.stack(s.samples[0].stack_id);
  ASSERT_EQ(st.location_ids.size(), 3u);
  EXPECT_EQ(s.location(st.location_ids[1]).mapping_id, 0u);
  ASSERT_NE(s.location(st.location_ids[2]).mapping_id, 0u);
  EXPECT_EQ(s.mapping(s.location(st.location_ids[2]).mapping_id).path, "/bin/app");
}

TEST(SessionAssembler, StopsLookingAgainAfterTheLastFollowUp) {
  FakeSource src;  // a start-up that never maps more than the executable and the loader
  add_loader_only_process(src, 10, "/bin/stuck");
  SessionAssembler a(src, "");
  model::Session s;
  announce_at(a, s, 10, 1000);
  int reads = 0;
  for (int64_t due = a.next_follow_up_ns(); due != std::numeric_limits<int64_t>::max();
       due = a.next_follow_up_ns()) {
    a.follow_up(due);
    ++reads;
    ASSERT_LE(reads, SessionAssembler::kMaxFollowUps);
  }
  EXPECT_EQ(reads, SessionAssembler::kMaxFollowUps);
  EXPECT_EQ(a.follow_up_snapshots(), static_cast<uint64_t>(SessionAssembler::kMaxFollowUps));
}

TEST(SessionAssembler, NoFollowUpOnceLibrariesAreMapped) {
  FakeSource src;
  src.add(10, "app",
          {user_map(10, 0x1000, 0x2000, 0, "/bin/app"),
           user_map(10, 0x3000, 0x4000, 0, "/lib/ld-linux.so.2"),
           user_map(10, 0x7000, 0x9000, 0, "/lib/libc.so.6")});
  src.procs[10].exe = "/bin/app";
  src.add(11, "static", {user_map(11, 0x1000, 0x2000, 0, "/bin/static")});  // no loader at all
  src.procs[11].exe = "/bin/static";
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  a.on_process_event(11, false);
  EXPECT_EQ(a.next_follow_up_ns(), std::numeric_limits<int64_t>::max());
}

TEST(SessionAssembler, AMappingASamplerMetIsReadWhileTheProcessLives) {
  FakeSource src;
  src.add(10, "app",
          {user_map(10, 0x1000, 0x2000, 0, "/bin/app"),
           user_map(10, 0x3000, 0x4000, 0, "/lib/ld-linux.so.2"),
           user_map(10, 0x7000, 0x9000, 0, "/lib/libc.so.6")});
  SessionAssembler a(src, "");
  model::Session s;
  announce_at(a, s, 10, 1000);
  EXPECT_EQ(a.next_follow_up_ns(), std::numeric_limits<int64_t>::max());
  // It dlopens a library; a sample in it meets a mapping the read so far lacks.
  src.maps[10].push_back(user_map(10, 0xa000, 0xb000, 0, "/opt/plugin.so"));
  fake_now = 5000;
  a.on_mappings_changed(10);
  EXPECT_EQ(a.next_follow_up_ns(), 5000);
  a.on_mappings_changed(10);  // again within kRemapIntervalNs: the one read is enough
  a.follow_up(5000);
  EXPECT_EQ(a.follow_up_snapshots(), 1u);
  EXPECT_EQ(a.next_follow_up_ns(), std::numeric_limits<int64_t>::max());
  // It exits before the drain: its samples in the library are still mapped.
  src.procs.clear();
  src.maps.clear();
  a.add(sample(10, {0xa010, 0x1100}));
  const model::Stack& st = s.stack(s.samples[0].stack_id);
  ASSERT_NE(s.location(st.location_ids[0]).mapping_id, 0u);
  EXPECT_EQ(s.mapping(s.location(st.location_ids[0]).mapping_id).path, "/opt/plugin.so");
  // Once the interval has passed, another mapping met is read again.
  fake_now = 5000 + SessionAssembler::kRemapIntervalNs;
  a.on_mappings_changed(10);
  EXPECT_EQ(a.next_follow_up_ns(), fake_now);
}

TEST(SessionAssembler, ForgetsAnExitedProcessTwoDrainsAfterItsExit) {
  FakeSource src;
  src.add(10, "short", {user_map(10, 0x1000, 0x2000, 0, "/bin/short")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  src.procs.clear();  // it exits
  src.maps.clear();
  a.on_process_exit(10);
  a.end_drain();                // the drain that ran when the exit came
  a.add(sample(10, {0x1100}));  // taken just before the exit, drained now: still described
  EXPECT_EQ(s.mappings.back().path, "/bin/short");
  EXPECT_EQ(a.tracked_processes(), 1u);
  a.end_drain();
  EXPECT_EQ(a.tracked_processes(), 0u);
  EXPECT_EQ(a.forgotten(), 1u);
  EXPECT_TRUE(a.sampled_pids().empty());
  EXPECT_EQ(a.sampled_process_count(), 1u);
}

TEST(SessionAssembler, ForgetsAGoneProcessWhoseExitWasNeverAnnounced) {
  FakeSource src;
  src.add(10, "lost", {user_map(10, 0x1000, 0x2000, 0, "/bin/lost")});
  src.add(11, "idle", {user_map(11, 0x1000, 0x2000, 0, "/bin/idle")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  a.on_process_event(11, false);
  a.add(sample(10, {0x1100}));
  a.add(sample(11, {0x1100}));
  src.procs.erase(10);  // it exits, and the sampler's announcement of that is lost
  src.maps.erase(10);
  for (uint64_t i = 1; i < SessionAssembler::kSweepDrains; ++i) a.end_drain();
  EXPECT_EQ(a.tracked_processes(), 2u);  // no sweep yet
  a.end_drain();                         // the sweep finds it gone...
  a.end_drain();
  a.end_drain();  // ...and it is forgotten two drains later, like an announced exit
  EXPECT_EQ(a.tracked_processes(), 1u);
  EXPECT_EQ(a.forgotten(), 1u);
  EXPECT_NE(a.tracked(11), nullptr);  // idle but alive: kept
  EXPECT_EQ(a.tracked(10), nullptr);
}

TEST(SessionAssembler, KeepsAProcessWhoseMainThreadExitedWhileOthersRun) {
  FakeSource src;  // still alive after its main thread's exit
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app")});
  SessionAssembler a(src, "");
  model::Session s;
  a.begin_session(s);
  a.on_process_event(10, false);
  a.on_process_exit(10);
  a.end_drain();
  a.end_drain();
  a.end_drain();
  EXPECT_EQ(a.tracked_processes(), 1u);
  EXPECT_EQ(a.forgotten(), 0u);
}

TEST(SessionAssembler, ANewProcessWithAnExitedPidIsSnapshottedAnew) {
  // Its exit announced, or lost (the sampler then announces the new process all the same).
  for (bool exit_announced : {true, false}) {
    SCOPED_TRACE(exit_announced ? "exit announced" : "exit lost");
    FakeSource src;
    src.add(10, "old", {user_map(10, 0x1000, 0x2000, 0, "/bin/old")});
    SessionAssembler a(src, "");
    model::Session s;
    a.begin_session(s);
    a.on_process_event(10, false);
    a.add(sample(10, {0x1100}));
    if (exit_announced) a.on_process_exit(10);
    src.add(10, "new", {user_map(10, 0x5000, 0x6000, 0, "/bin/new")});  // the pid is reused
    a.on_process_event(10, false);
    a.add(sample(10, {0x5100}));
    EXPECT_EQ(s.processes.back().comm, "new");
    EXPECT_EQ(s.mappings.back().path, "/bin/new");
    a.end_drain();
    a.end_drain();
    EXPECT_EQ(a.tracked_processes(), 1u);  // alive: not forgotten
  }
}

// gp-record's long sessions: each drain's entries are written as a delta and dropped; short-lived
// processes come and go, one long-lived process is sampled throughout. Interning restarts keep
// memory flat, and the archive still reads back with every frame in its own binary.
TEST(SessionAssembler, StreamedSessionWithChurnForgetsAndStaysCorrect) {
  FakeSource src;
  src.add(10, "server", {user_map(10, 0x1000, 0x2000, 0, "/bin/server")});
  SessionAssembler a(src, "KBID", /*restart_after=*/16);
  model::Session s;
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, true);
  archive::Writer w(*out);
  a.begin_session(s);
  ASSERT_TRUE(w.begin_session(s).ok());
  a.on_process_event(10, false);
  constexpr int kDrains = 60;
  for (int d = 0; d < kDrains; ++d) {
    int32_t pid = 1000 + d;
    src.add(pid, "job", {user_map(pid, 0x7000, 0x8000, 0, "/bin/job" + std::to_string(d))});
    a.on_process_event(pid, false);
    a.add(sample(10, {0x1100, 0x1200}, {0xffffffff81000010}, 2));
    a.add(sample(pid, {0x7100 + static_cast<uint64_t>(d), 0x7200}, {}, 1));
    src.procs.erase(pid);
    src.maps.erase(pid);
    a.on_process_exit(pid);
    archive::ChunkDelta delta;
    delta.base = a.take_entries(delta.entries);
    ASSERT_TRUE(w.write_delta(delta).ok());
    EXPECT_TRUE(s.locations.empty() && s.stacks.empty());  // nothing kept once written
    a.end_drain();
    EXPECT_LE(a.tracked_processes(), 4u);
  }
  EXPECT_GT(a.interning_restarts(), 0u);
  // The last job exited during the last drain: forgotten at the end of the next one.
  EXPECT_EQ(a.forgotten(), static_cast<uint64_t>(kDrains - 1));
  a.add(sample(10, {0x1100, 0x1200}, {0xffffffff81000010}, 2));  // the last drain
  archive::ChunkDelta last;
  last.base = a.take_entries(last.entries);
  ASSERT_TRUE(w.write_delta(last).ok());
  ASSERT_TRUE(w.end_deltas({}, true).ok());
  ASSERT_TRUE(out->close().ok());

  auto in = archive::InputStream::from_memory(bytes);
  auto archive = archive::read_archive(*in);
  ASSERT_TRUE(archive.ok()) << archive.error().message;
  ASSERT_EQ(archive->sessions.size(), 1u);
  const model::Session& r = archive->sessions[0];
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.total_samples(), static_cast<uint64_t>(kDrains * 3 + 2));
  uint64_t server = 0, jobs = 0;
  for (const model::Sample& smp : r.samples) {
    const model::Stack& st = r.stack(smp.stack_id);
    const model::Location& leaf_user = r.location(st.location_ids[smp.pid == 10 ? 1 : 0]);
    const model::Mapping& m = r.mapping(leaf_user.mapping_id);
    EXPECT_EQ(m.pid, smp.pid);
    if (smp.pid == 10) {
      server += smp.count;
      EXPECT_EQ(m.path, "/bin/server");
      EXPECT_EQ(leaf_user.file_offset, 0x100u);
      EXPECT_EQ(r.location(st.location_ids[0]).kind, model::FrameKind::kernel);
    } else {
      jobs += smp.count;
      EXPECT_EQ(m.path, "/bin/job" + std::to_string(smp.pid - 1000));
      EXPECT_EQ(leaf_user.file_offset, 0x100u + (smp.pid - 1000));
    }
  }
  EXPECT_EQ(server, static_cast<uint64_t>(kDrains * 2 + 2));
  EXPECT_EQ(jobs, static_cast<uint64_t>(kDrains));
  // A restart writes the live process's mapping again, a forgotten one's never twice.
  std::map<std::string, size_t> mapping_entries;
  for (const model::Mapping& m : r.mappings) ++mapping_entries[m.path];
  EXPECT_EQ(mapping_entries["/bin/server"], a.interning_restarts() + 1);
  EXPECT_EQ(mapping_entries["[kernel.kallsyms]"], a.interning_restarts() + 1);
  for (int d = 0; d < kDrains; ++d) EXPECT_EQ(mapping_entries["/bin/job" + std::to_string(d)], 1u);
}

}  // namespace
}  // namespace gp::test::record
