#pragma once
// The archive behind the stack-end tests and its checked-in fixture
// (tests/fixtures/archives/stack-ends.gpa, used by the gp-fold, gp-flame, gp-merge and
// gp-symbolize CLI tests): one process "app" (pid 100) whose stacks ended every way an unwinder
// can tell —
//   main;loop;spin       complete   5 samples
//   main;loop;spin       unknown    2 samples (same frames, another stack: no marker either)
//   deep;deep;spin       truncated  3 samples (a recursion cut at the depth limit)
//   deep;spin;read_[k]   truncated  2 samples (kernel frames below the cut user stack)
//   (app);(app)          truncated  1 sample  (two unsymbolized addresses in /opt/app/bin/app)
// so the `[truncated]` marker shows on 6 samples, after the comm, at the root of the frames.

#include "gp/model/builder.h"

namespace gp::test::stack_end_fixture {

inline model::Session session() {
  using model::FrameKind;
  using model::StackEnd;
  model::Session s;
  s.header.producer = "gp-record";
  s.header.producer_version = "0.1.0";
  s.header.source = model::SourceKind::system;
  s.header.host.hostname = "host-1";
  s.header.start_time_ns = 1700000000000000000;
  s.header.sampling = {"cpu-clock", 99, 0, "dwarf", 1000000000};
  model::SessionBuilder b(s);
  model::Process app;
  app.pid = 100;
  app.comm = "app";
  b.process(app);
  b.thread(100, 100, "app");
  uint64_t main = b.symbolic_location(FrameKind::native, b.function("main"));
  uint64_t loop = b.symbolic_location(FrameKind::native, b.function("loop"));
  uint64_t deep = b.symbolic_location(FrameKind::native, b.function("deep"));
  uint64_t spin = b.symbolic_location(FrameKind::native, b.function("spin"));
  uint64_t read = b.symbolic_location(FrameKind::kernel, b.function("read"));
  model::Mapping m;
  m.pid = 100;
  m.start = 0x400000;
  m.end = 0x500000;
  m.path = "/opt/app/bin/app";
  uint64_t exe = b.mapping(m);
  uint64_t raw_leaf = b.address_location(exe, 0x401010, FrameKind::native, false);
  uint64_t raw_caller = b.address_location(exe, 0x402020, FrameKind::native, true);
  b.add_sample(100, 100, b.stack({spin, loop, main}, StackEnd::complete), 5);
  b.add_sample(100, 100, b.stack({spin, loop, main}, StackEnd::unknown), 2);
  b.add_sample(100, 100, b.stack({spin, deep, deep}, StackEnd::truncated), 3);
  b.add_sample(100, 100, b.stack({read, spin, deep}, StackEnd::truncated), 2);
  b.add_sample(100, 100, b.stack({raw_leaf, raw_caller}, StackEnd::truncated), 1);
  s.trailer = model::Trailer{true, 1700000001000000000, 1, 13, {}};
  return s;
}

inline model::Archive archive() {
  model::Archive a;
  a.sessions.push_back(session());
  return a;
}

}  // namespace gp::test::stack_end_fixture
