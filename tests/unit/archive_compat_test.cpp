// Backward-read test (STYLE.md §L5): archives written by earlier gp versions must keep reading
// the same. tests/fixtures/archives/format-1.0.gpa, format-1.1.gpa and format-1.2.gpa were each
// written once by this file's generator (with the writer of their version) and are checked in;
// they are never regenerated after a release, only joined by newer fixtures (format-1.3.gpa, ...)
// when the schema grows. The writer of today writes the newest version only, so only its fixture is
// (re)written by GP_UPDATE_GOLDEN=1.
//
// The same generator writes the archive fuzzer's seed corpus (tests/fuzz/corpus/archive/), and
// a test checks that each seed still reads as its name says (plain, LZ4, cut, ...).
//
// Regenerate (deliberately, then review the diff): GP_UPDATE_GOLDEN=1 build/bin/gp_unit_tests
//   --gtest_filter='ArchiveCompat.*'

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gp/archive/reader.h"
#include "gp/archive/writer.h"

namespace gp::test::compat {
namespace {

const std::string kDataDir = GP_TEST_DATA_DIR;
const std::string kFixture = kDataDir + "/fixtures/archives/format-1.0.gpa";
const std::string kFixture11 = kDataDir + "/fixtures/archives/format-1.1.gpa";
const std::string kFixture12 = kDataDir + "/fixtures/archives/format-1.2.gpa";
const std::string kSeedDir = kDataDir + "/fuzz/corpus/archive";

bool updating() {
  const char* v = std::getenv("GP_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Format 1.0's content, frozen: every table and header field holds a value that is not the
// default, so a reader that drops or moves a field fails below. Never change this function.
model::Session format_1_0_session(int variant) {
  model::Session s;
  auto& h = s.header;
  h.producer = "gp-compat-fixture";
  h.producer_version = "0.1.0";
  h.argv = {"gp-record", "-d", "5"};
  h.source = model::SourceKind::system;
  h.session_id = "00000000-0000-4000-8000-00000000000" + std::to_string(variant);
  h.host = {"host-a",
            "boot-1",
            "6.1.0-test",
            "#1 SMP",
            "x86_64",
            std::string("\xAB\xCD\x00\x01", 4),
            8,
            "Debian GNU/Linux 12 (bookworm)"};
  h.start_time_ns = 1700000000123456789;
  h.monotonic_start_ns = 987654321;
  h.sampling = {"cpu-clock", 99, 0, "fp", 5000000000};
  h.symbolized = variant == 2;
  h.metadata_json = R"({"cloud_provider":"unknown"})";

  s.processes.push_back({4242,
                         1,
                         42,
                         "python3",
                         "/usr/bin/python3.11",
                         {"python3", "app.py"},
                         1699999999000000000,
                         1000,
                         "0::/system.slice/app.service",
                         "c0ffee",
                         "web",
                         "python: app.py (/srv/app.py)",
                         R"({"python_version":"3.11"})",
                         false,
                         "python",
                         ""});
  s.threads.push_back({4243, 4242, "worker 1"});
  s.mappings.push_back({4242, 0x400000, 0x4a0000, 0x1000, "/usr/bin/python3.11",
                        std::string("\x11\x22\x33\x44\x55", 5), 0x803, 123456,
                        model::MappingKind::user});
  s.mappings.push_back({0, 0xffffffff81000000, 0xffffffff82000000, 0, "[kernel.kallsyms]", "", 0, 0,
                        model::MappingKind::kernel});
  s.functions.push_back({"main", "", "main.c", 10, ""});
  s.functions.push_back({"inlined_helper", "_Z14inlined_helperv", "util.h", 3, ""});
  s.functions.push_back({"handle (/srv/app.py:12)", "", "/srv/app.py", 12, ""});
  // 1: raw user address, resolved later by the location update below.
  s.locations.push_back(
      {1, 0x401234, 0x2234, model::FrameKind::native, {}, model::SymbolStatus::unsymbolized, true});
  // 2: kernel address, resolved with an inline chain (outermost first).
  s.locations.push_back({2,
                         0xffffffff81001000,
                         0x1000,
                         model::FrameKind::kernel,
                         {{1, 20, 4, false}, {2, 5, 0, true}},
                         model::SymbolStatus::resolved,
                         false});
  // 3: symbolic Python frame.
  s.locations.push_back({0,
                         0,
                         0,
                         model::FrameKind::python,
                         {{3, 14, 0, false}},
                         model::SymbolStatus::symbolic,
                         false});
  s.location_updates.push_back(
      {1, {{1, 11, 2, false}}, model::SymbolStatus::resolved, model::FrameKind::native});
  s.stacks.push_back({{2, 1}});  // leaf first: kernel frame, then its user caller
  s.stacks.push_back({{3, 1}});
  s.samples.push_back({4242, 4243, 1, 7, 3, 70707070, {}});
  s.samples.push_back({4242, 4242, 2, 5, -1, 0, {}});
  s.kernel_symbols.push_back({0xffffffff81001000, "do_syscall_64", "", 'T'});
  s.kernel_symbols.push_back({0xffffffffc0001000, "ext4_map_blocks", "ext4", 't'});
  s.jit_maps.push_back(
      {4242, "/tmp/perf-4242.map", {{0x7f0000001000, 0x40, "py::handle:/srv/app.py"}}});
  s.stack_copies.push_back({4242, 4243, {1, 2, 3}, std::string("\x00\x10\x20\x30", 4), 1, 2});
  s.set_counter("samples.lost", 3);
  s.set_counter("stacks.collisions", 1);
  return s;
}

// What reading format_1_0_session(variant) back must give: location updates applied.
model::Session format_1_0_expected(int variant) {
  model::Session s = format_1_0_session(variant);
  s.header.format_major = 1;
  s.header.format_minor = 0;
  s.locations[0].lines = {{1, 11, 2, false}};
  s.locations[0].status = model::SymbolStatus::resolved;
  s.location_updates.clear();
  return s;
}

// Format 1.1 added Stack.end: 1.0's content, its stacks marked truncated and complete, and a
// third stack with the first one's locations whose end is unknown (a different stack: id 3).
// Never change this function.
model::Session format_1_1_session(int variant) {
  model::Session s = format_1_0_session(variant);
  s.stacks[0].end = model::StackEnd::truncated;
  s.stacks[1].end = model::StackEnd::complete;
  s.stacks.push_back({{2, 1}, model::StackEnd::unknown});
  s.samples.push_back({4242, 4243, 3, 4, 1, 40404040, {}});
  return s;
}

model::Session format_1_1_expected(int variant) {
  model::Session s = format_1_0_expected(variant);
  model::Session v = format_1_1_session(variant);
  s.header.format_minor = 1;
  s.stacks = v.stacks;
  s.samples = v.samples;
  return s;
}

// Format 1.2 added Sample.comm and Function.package: 1.1's content, the Python function's
// package, the first sample under the name its process had before an exec, and a sample of the
// same (pid, tid, stack) under the current name (another sample: comm is part of the key).
// Never change this function.
model::Session format_1_2_session(int variant) {
  model::Session s = format_1_1_session(variant);
  s.functions[2].package = "flask==3.0.0";
  s.samples[0].comm = "gunicorn";
  s.samples.push_back({4242, 4243, 1, 2, 3, 20202020, "python3"});
  return s;
}

model::Session format_1_2_expected(int variant) {
  model::Session s = format_1_1_expected(variant);
  model::Session v = format_1_2_session(variant);
  s.header.format_minor = 2;
  s.functions = v.functions;
  s.samples = v.samples;
  return s;
}

std::string write(model::Session s, bool compress, size_t chunk_bytes = 512u << 10,
                  bool clean = true) {
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, compress);
  archive::WriterOptions opt;
  opt.chunk_bytes = chunk_bytes;
  archive::Writer w(*out, opt);
  EXPECT_TRUE(w.begin_session(s).ok());
  EXPECT_TRUE(w.end_session(s, clean).ok());
  EXPECT_TRUE(out->close().ok());
  return bytes;
}

// Every field of a session as text, so a mismatch shows up as a readable diff.
std::string dump(const model::Session& s) {
  std::ostringstream o;
  auto q = [](const std::string& v) {
    std::string out = "'";
    for (unsigned char c : v) {
      if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
      else out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
    }
    return out + "'";
  };
  const auto& h = s.header;
  o << "header " << h.format_major << "." << h.format_minor << " " << q(h.producer) << " "
    << q(h.producer_version) << " source=" << int(h.source) << " " << q(h.session_id)
    << " start=" << h.start_time_ns << " mono=" << h.monotonic_start_ns
    << " symbolized=" << h.symbolized << " " << q(h.metadata_json) << "\n argv";
  for (const auto& a : h.argv) o << " " << q(a);
  o << "\n host " << q(h.host.hostname) << q(h.host.boot_id) << q(h.host.kernel_release)
    << q(h.host.kernel_version) << q(h.host.machine) << q(h.host.kernel_build_id)
    << h.host.cpu_count << q(h.host.os_release) << "\n sampling " << q(h.sampling.event)
    << h.sampling.frequency_hz << " " << h.sampling.period << q(h.sampling.mode)
    << h.sampling.duration_ns << "\n";
  for (const auto& p : s.processes) {
    o << "process " << p.pid << " " << p.ppid << " " << p.ns_pid << q(p.comm) << q(p.exe);
    for (const auto& a : p.cmdline) o << " arg" << q(a);
    o << " " << p.start_time_ns << " " << p.uid << q(p.cgroup) << q(p.container_id)
      << q(p.container_name) << q(p.appid) << q(p.app_metadata_json) << p.exited << q(p.runtime)
      << q(p.error_frame) << "\n";
  }
  for (const auto& t : s.threads) o << "thread " << t.tid << " " << t.pid << q(t.comm) << "\n";
  for (const auto& m : s.mappings)
    o << "mapping " << m.pid << std::hex << " " << m.start << "-" << m.end << " " << m.file_offset
      << std::dec << q(m.path) << q(m.build_id) << m.dev << " " << m.inode << " " << int(m.kind)
      << "\n";
  for (const auto& f : s.functions)
    o << "function " << q(f.name) << q(f.system_name) << q(f.file_name) << f.start_line
      << q(f.package) << "\n";
  for (const auto& l : s.locations) {
    o << "location " << l.mapping_id << std::hex << " " << l.address << " " << l.file_offset
      << std::dec << " kind=" << int(l.kind) << " status=" << int(l.status)
      << " ret=" << l.is_return_address;
    for (const auto& ln : l.lines)
      o << " [" << ln.function_id << ":" << ln.line << ":" << ln.column << ":" << ln.inlined << "]";
    o << "\n";
  }
  for (const auto& st : s.stacks) {
    o << "stack";
    for (auto id : st.location_ids) o << " " << id;
    o << " end=" << int(st.end) << "\n";
  }
  for (const auto& sm : s.samples)
    o << "sample " << sm.pid << " " << sm.tid << " " << sm.stack_id << " " << sm.count << " "
      << sm.cpu << " " << sm.weight << q(sm.comm) << "\n";
  for (const auto& k : s.kernel_symbols)
    o << "ksym " << std::hex << k.address << std::dec << q(k.name) << q(k.module) << k.type << "\n";
  for (const auto& j : s.jit_maps) {
    o << "jitmap " << j.pid << q(j.path);
    for (const auto& e : j.entries)
      o << " " << std::hex << e.start << "+" << e.size << std::dec << q(e.name);
    o << "\n";
  }
  for (const auto& c : s.stack_copies) {
    o << "stackcopy " << c.pid << " " << c.tid << q(c.stack) << " " << c.kernel_stack_id << " "
      << c.count;
    for (auto r : c.registers) o << " r" << r;
    o << "\n";
  }
  for (const auto& c : s.counters) o << "counter " << q(c.name) << " " << c.value << "\n";
  o << "truncated=" << s.truncated << "\n";
  return o.str();
}

Result<model::Archive> read_file(const std::string& path) { return archive::read_archive(path); }

TEST(ArchiveCompat, ReadsFormat1_0Archive) {
  auto a = read_file(kFixture);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->truncated) << a->problem;
  ASSERT_EQ(a->sessions.size(), 2u);  // a plain session, then an LZ4-compressed one
  for (int variant = 1; variant <= 2; ++variant) {
    const auto& got = a->sessions[variant - 1];
    EXPECT_EQ(dump(got), dump(format_1_0_expected(variant))) << "session " << variant;
    ASSERT_TRUE(got.trailer.has_value());
    EXPECT_TRUE(got.trailer->clean_close);
    EXPECT_EQ(got.trailer->sample_count, 12u);
    EXPECT_EQ(got.trailer->counters.size(), 2u);
  }
}

// 1.0 archives have no Stack.end: every stack reads as unknown (checked by the dump above too).
TEST(ArchiveCompat, Format1_0StacksReadAsUnknownEnd) {
  auto a = read_file(kFixture);
  ASSERT_TRUE(a.ok()) << a.error().message;
  for (const auto& s : a->sessions)
    for (const auto& st : s.stacks) EXPECT_EQ(st.end, model::StackEnd::unknown);
}

TEST(ArchiveCompat, ReadsFormat1_1Archive) {
  auto a = read_file(kFixture11);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->truncated) << a->problem;
  ASSERT_EQ(a->sessions.size(), 2u);
  for (int variant = 1; variant <= 2; ++variant) {
    const auto& got = a->sessions[variant - 1];
    EXPECT_EQ(dump(got), dump(format_1_1_expected(variant))) << "session " << variant;
    ASSERT_EQ(got.stacks.size(), 3u);
    EXPECT_EQ(got.stacks[0].end, model::StackEnd::truncated);
    EXPECT_EQ(got.stacks[1].end, model::StackEnd::complete);
    EXPECT_EQ(got.stacks[2].end, model::StackEnd::unknown);
    ASSERT_TRUE(got.trailer.has_value());
    EXPECT_EQ(got.trailer->sample_count, 16u);
  }
}

// 1.0 and 1.1 archives have no Sample.comm nor Function.package: both read as empty (checked by
// the dumps above too), so samples are named after their process and frames carry no package.
TEST(ArchiveCompat, Format1_0And1_1ReadEmptyCommAndPackage) {
  for (const std::string& path : {kFixture, kFixture11}) {
    auto a = read_file(path);
    ASSERT_TRUE(a.ok()) << path << ": " << a.error().message;
    ASSERT_FALSE(a->sessions.empty()) << path;
    for (const auto& s : a->sessions) {
      for (const auto& f : s.functions) EXPECT_EQ(f.package, "") << path;
      for (const auto& smp : s.samples) EXPECT_EQ(smp.comm, "") << path;
    }
  }
}

TEST(ArchiveCompat, ReadsFormat1_2Archive) {
  if (updating())
    spit(kFixture12, write(format_1_2_session(1), false) + write(format_1_2_session(2), true));
  auto a = read_file(kFixture12);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->truncated) << a->problem;
  ASSERT_EQ(a->sessions.size(), 2u);
  for (int variant = 1; variant <= 2; ++variant) {
    const auto& got = a->sessions[variant - 1];
    EXPECT_EQ(dump(got), dump(format_1_2_expected(variant))) << "session " << variant;
    EXPECT_EQ(got.header.format_minor, 2u);
    ASSERT_EQ(got.functions.size(), 3u);
    EXPECT_EQ(got.functions[2].package, "flask==3.0.0");
    ASSERT_EQ(got.samples.size(), 4u);
    EXPECT_EQ(got.samples[0].comm, "gunicorn");
    EXPECT_EQ(got.samples[1].comm, "");
    EXPECT_EQ(got.samples[3].comm, "python3");
    ASSERT_TRUE(got.trailer.has_value());
    EXPECT_EQ(got.trailer->sample_count, 18u);
  }
}

// Seeds for tests/fuzz/archive_fuzz.cpp: small, covering each framing case.
struct Seed {
  std::string name;
  std::string bytes;
  size_t sessions;  // sessions a reader gets back
  bool truncated;
  bool has_chunks = true;  // the kept prefix holds at least the first chunk
};

std::vector<Seed> make_seeds() {
  auto one = [] { return format_1_0_session(1); };
  std::string plain = write(one(), false);
  std::string packed = write(one(), true);
  std::string chunked = write(one(), false, 64);  // one small chunk per table entry or so
  std::string chunked_lz4 = write(one(), true, 64);
  std::string header_only;
  {
    auto out = archive::OutputStream::to_string(&header_only, false);
    archive::Writer w(*out);
    model::Session s = one();
    EXPECT_TRUE(w.begin_session(s).ok());
  }
  return {
      {"plain.gpa", plain, 1, false},
      {"lz4.gpa", packed, 1, false},
      {"small-chunks.gpa", chunked, 1, false},
      {"concatenated.gpa", plain + packed + chunked, 3, false},
      {"unclean-close.gpa", write(one(), false, 512u << 10, false), 1, true},
      {"truncated.gpa", chunked.substr(0, chunked.size() / 2), 1, true},
      {"truncated-lz4.gpa", chunked_lz4.substr(0, chunked_lz4.size() * 2 / 3), 1, true},
      {"header-only.gpa", header_only, 1, true, false},
      {"cut-second-session.gpa", plain + packed.substr(0, packed.size() - 9), 2, true},
  };
}

TEST(ArchiveCompat, FuzzSeedsReadAsTheirNamesSay) {
  for (const auto& seed : make_seeds()) {
    const std::string path = kSeedDir + "/" + seed.name;
    if (updating()) spit(path, seed.bytes);
    auto a = read_file(path);
    ASSERT_TRUE(a.ok()) << seed.name << ": " << a.error().message;
    EXPECT_EQ(a->sessions.size(), seed.sessions) << seed.name;
    EXPECT_EQ(a->truncated, seed.truncated) << seed.name << ": " << a->problem;
    EXPECT_EQ(a->sessions[0].processes.size(), seed.has_chunks ? 1u : 0u) << seed.name;
  }
}

}  // namespace
}  // namespace gp::test::compat
