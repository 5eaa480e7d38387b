// SessionAssembler: raw sampled addresses -> processes, hit mappings, locations, stacks.
#include <gtest/gtest.h>

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

model::Mapping user_map(int32_t pid, uint64_t start, uint64_t end, uint64_t offset, const std::string& path) {
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
  void add(int32_t pid, const std::string& comm, std::vector<model::Mapping> m) {
    model::Process p;
    p.pid = pid;
    p.comm = comm;
    procs[pid] = p;
    maps[pid] = std::move(m);
  }
};

RawSample sample(int32_t pid, std::vector<uint64_t> user, std::vector<uint64_t> kernel = {}, uint64_t count = 1) {
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
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0x0, "/bin/app"), user_map(10, 0x5000, 0x6000, 0x3000, "/lib/libc.so")});
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
  src.add(10, "app", {user_map(10, 0x1000, 0x2000, 0, "/bin/app"), user_map(10, 0x5000, 0x6000, 0, "/lib/unused.so")});
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
  EXPECT_EQ(s.mapping(s.location(s.stack(s.samples.back().stack_id).location_ids[0]).mapping_id).path,
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

}  // namespace
}  // namespace gp::test::record
