#pragma once
// The archive behind gp-fold's unit tests, its checked-in fixture
// (tests/fixtures/archives/fold-basic.gpa) and the CLI goldens: two hosts' worth of features in
// one small session — host info and gProfiler metadata, a containerised python process with an
// appid and app metadata, a native process with resolved, inlined, unsymbolized and kernel
// frames, a java process with an error frame, idle samples, and a second session.

#include "gp/model/builder.h"

namespace gp::test::fold_fixture {

inline model::Session first_session() {
  using model::FrameKind;
  model::Session s;
  s.header.producer = "gp-record";
  s.header.producer_version = "0.1.0";
  s.header.source = model::SourceKind::system;
  s.header.host.hostname = "web-1";
  s.header.host.kernel_release = "6.1.0-18-amd64";
  s.header.host.kernel_version = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)";
  s.header.host.machine = "x86_64";
  s.header.host.cpu_count = 4;
  s.header.host.os_release =
      "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n";
  s.header.start_time_ns = 1700000000123456789;
  s.header.monotonic_start_ns = 1218241600000000;
  s.header.sampling = {"cpu-clock", 99, 0, "fp", 10000000000};
  s.header.metadata_json =
      R"({"cloud_provider": "unknown", "memory_capacity_mb": 7940, "run_arguments": {"frequency": 99, "server_token": "secret"}})";
  model::SessionBuilder b(s);

  model::Process py;
  py.pid = 200;
  py.comm = "python3";
  py.container_name = "web";
  py.container_id = std::string(64, 'a');
  py.appid = "python: app.py (/srv/app.py)";
  py.app_metadata_json =
      R"({"exe": "/usr/bin/python3.11", "python_version": "Python 3.11.2", "arch": "x86_64"})";
  b.process(py);
  uint64_t f_main = b.function("main", "/srv/app.py", 10);
  uint64_t f_work = b.function("Worker.run;step", "/srv/app.py", 20);
  uint64_t l_main = b.symbolic_location(FrameKind::python, f_main, 12);
  uint64_t l_work = b.symbolic_location(FrameKind::python, f_work, 22);
  b.add_sample(200, 200, b.stack({l_work, l_main}), 12);
  b.add_sample(200, 201, b.stack({l_main}), 3);

  model::Process nat;
  nat.pid = 300;
  nat.comm = "server";
  b.process(nat);
  model::Mapping m;
  m.pid = 300;
  m.start = 0x400000;
  m.end = 0x500000;
  m.path = "/usr/bin/server";
  uint64_t exe = b.mapping(m);
  model::Mapping k;
  k.pid = -1;
  k.start = 0xffffffff81000000;
  k.end = 0xffffffff82000000;
  k.path = "[kernel.kallsyms]";
  k.kind = model::MappingKind::kernel;
  uint64_t kern = b.mapping(k);
  uint64_t resolved = b.address_location(exe, 0x401000, FrameKind::native, true);
  s.location(resolved).status = model::SymbolStatus::resolved;
  s.location(resolved).lines = {{b.function("main"), 5, 0, false},
                                {b.function("serve"), 40, 0, true}};
  uint64_t raw = b.address_location(exe, 0x402000, FrameKind::native, true);
  uint64_t k_read = b.symbolic_location(FrameKind::kernel, b.function("ksys_read"), 0, kern);
  uint64_t k_raw = b.address_location(kern, 0xffffffff81001000, FrameKind::kernel, false);
  b.add_sample(300, 300, b.stack({k_raw, k_read, raw, resolved}), 7);
  b.add_sample(300, 300, b.stack({raw, resolved}), 5);

  model::Process java;
  java.pid = 400;
  java.comm = "java";
  java.error_frame = "[Profiling skipped: profiled-oom]";
  b.process(java);
  uint64_t j = b.symbolic_location(FrameKind::java, b.function("Fib.main([Ljava/lang/String;)V"));
  b.add_sample(400, 400, b.stack({j}), 2);

  b.thread(0, 0, "swapper/0");
  uint64_t idle = b.symbolic_location(FrameKind::kernel, b.function("do_idle"), 0, kern);
  b.add_sample(0, 0, b.stack({idle}), 40);
  s.trailer = model::Trailer{true, 1700000010000000000, 1, 69, {}};
  return s;
}

// A second session (another recording interval) with one more sample of the python stack.
inline model::Session second_session() {
  using model::FrameKind;
  model::Session s;
  s.header.host.hostname = "web-1";
  model::SessionBuilder b(s);
  model::Process py;
  py.pid = 200;
  py.comm = "python3";
  py.container_name = "web";
  py.appid = "python: app.py (/srv/app.py)";
  py.app_metadata_json =
      R"({"python_version": "Python 3.11.2", "arch": "x86_64", "exe": "/usr/bin/python3.11"})";
  b.process(py);
  uint64_t l_main =
      b.symbolic_location(FrameKind::python, b.function("main", "/srv/app.py", 10), 12);
  b.add_sample(200, 200, b.stack({l_main}), 1);
  s.trailer = model::Trailer{true, 1700000020000000000, 1, 1, {}};
  return s;
}

inline model::Archive archive() {
  model::Archive a;
  a.sessions.push_back(first_session());
  a.sessions.push_back(second_session());
  return a;
}

}  // namespace gp::test::fold_fixture
