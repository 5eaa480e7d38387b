// pprof export: the protobuf wire encoder, gzip, and write_pprof/encode_pprof checked by
// decoding the output here with a minimal reader, then by the real pprof parser and CLI
// (tests/pprof/validate.sh: Go's github.com/google/pprof/profile, built offline).

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <sys/wait.h>

#include "fold/protobuf_writer.h"
#include "gp/archive/reader.h"
#include "gp/fold/gzip.h"
#include "gp/fold/pprof.h"
#include "gp/model/builder.h"
#include "stack_end_fixture.h"

namespace gp::test::pprof {
namespace {

using model::FrameKind;

// ---- a minimal profile.proto reader (wire types 0 and 2 only, as pprof uses) ----

struct Field {
  uint32_t number = 0;
  uint64_t varint = 0;     // wire type 0
  std::string_view bytes;  // wire type 2
  bool length_delimited = false;
};

uint64_t read_varint(std::string_view& in) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) throw std::runtime_error("truncated varint");
    auto b = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  throw std::runtime_error("varint too long");
}

std::vector<Field> read_fields(std::string_view in) {
  std::vector<Field> out;
  while (!in.empty()) {
    uint64_t tag = read_varint(in);
    Field f;
    f.number = static_cast<uint32_t>(tag >> 3);
    if ((tag & 7) == 0) {
      f.varint = read_varint(in);
    } else if ((tag & 7) == 2) {
      uint64_t n = read_varint(in);
      if (n > in.size()) throw std::runtime_error("truncated field");
      f.bytes = in.substr(0, n);
      f.length_delimited = true;
      in.remove_prefix(n);
    } else {
      throw std::runtime_error("unexpected wire type");
    }
    out.push_back(f);
  }
  return out;
}

std::vector<uint64_t> read_packed(std::string_view in) {
  std::vector<uint64_t> out;
  while (!in.empty()) out.push_back(read_varint(in));
  return out;
}

struct Label {
  uint64_t key = 0, str = 0;
  int64_t num = 0;
};
struct Sample {
  std::vector<uint64_t> locations;
  std::vector<int64_t> values;
  std::vector<Label> labels;
};
struct Line {
  uint64_t function = 0;
  int64_t line = 0;
};
struct Location {
  uint64_t id = 0, mapping = 0, address = 0;
  std::vector<Line> lines;
};
struct Function {
  uint64_t id = 0, name = 0, system_name = 0, filename = 0;
  int64_t start_line = 0;
};
struct Mapping {
  uint64_t id = 0, start = 0, limit = 0, offset = 0, filename = 0, build_id = 0;
  bool has_functions = false;
};
struct Profile {
  std::vector<std::pair<uint64_t, uint64_t>> sample_types;
  std::vector<Sample> samples;
  std::vector<Mapping> mappings;
  std::vector<Location> locations;
  std::vector<Function> functions;
  std::vector<std::string> strings;
  std::pair<uint64_t, uint64_t> period_type;
  int64_t period = 0, time_nanos = 0, duration_nanos = 0;
  int time_nanos_count = 0;
  std::vector<uint64_t> comments;

  const std::string& str(uint64_t i) const { return strings.at(i); }
  const Function& function(uint64_t id) const {
    for (const auto& f : functions) {
      if (f.id == id) return f;
    }
    throw std::runtime_error("no function " + std::to_string(id));
  }
  const Location& location(uint64_t id) const {
    for (const auto& l : locations) {
      if (l.id == id) return l;
    }
    throw std::runtime_error("no location " + std::to_string(id));
  }
  int64_t total(size_t column) const {
    int64_t n = 0;
    for (const auto& s : samples) n += s.values.at(column);
    return n;
  }
  // Root-first function names of a sample (inline lines innermost first, as pprof stores them).
  std::string stack(const Sample& s) const {
    std::string out;
    for (auto id = s.locations.rbegin(); id != s.locations.rend(); ++id) {
      const Location& loc = location(*id);
      for (auto l = loc.lines.rbegin(); l != loc.lines.rend(); ++l) {
        out += (out.empty() ? "" : ";") + str(function(l->function).name);
      }
      if (loc.lines.empty()) out += (out.empty() ? "" : ";") + std::string("?");
    }
    return out;
  }
  std::string label_str(const Sample& s, const std::string& key) const {
    for (const auto& l : s.labels) {
      if (str(l.key) == key) return str(l.str);
    }
    return "<none>";
  }
  int64_t label_num(const Sample& s, const std::string& key) const {
    for (const auto& l : s.labels) {
      if (str(l.key) == key) return l.num;
    }
    return -1;
  }
};

Sample decode_sample(std::string_view bytes) {
  Sample s;
  for (const Field& f : read_fields(bytes)) {
    if (f.number == 1) s.locations = read_packed(f.bytes);
    if (f.number == 2) {
      for (uint64_t v : read_packed(f.bytes)) s.values.push_back(static_cast<int64_t>(v));
    }
    if (f.number == 3) {
      Label l;
      for (const Field& g : read_fields(f.bytes)) {
        if (g.number == 1) l.key = g.varint;
        if (g.number == 2) l.str = g.varint;
        if (g.number == 3) l.num = static_cast<int64_t>(g.varint);
      }
      s.labels.push_back(l);
    }
  }
  return s;
}

Location decode_location(std::string_view bytes) {
  Location l;
  for (const Field& f : read_fields(bytes)) {
    if (f.number == 1) l.id = f.varint;
    if (f.number == 2) l.mapping = f.varint;
    if (f.number == 3) l.address = f.varint;
    if (f.number == 4) {
      Line line;
      for (const Field& g : read_fields(f.bytes)) {
        if (g.number == 1) line.function = g.varint;
        if (g.number == 2) line.line = static_cast<int64_t>(g.varint);
      }
      l.lines.push_back(line);
    }
  }
  return l;
}

Function decode_function(std::string_view bytes) {
  Function fn;
  for (const Field& f : read_fields(bytes)) {
    if (f.number == 1) fn.id = f.varint;
    if (f.number == 2) fn.name = f.varint;
    if (f.number == 3) fn.system_name = f.varint;
    if (f.number == 4) fn.filename = f.varint;
    if (f.number == 5) fn.start_line = static_cast<int64_t>(f.varint);
  }
  return fn;
}

Mapping decode_mapping(std::string_view bytes) {
  Mapping m;
  for (const Field& f : read_fields(bytes)) {
    if (f.number == 1) m.id = f.varint;
    if (f.number == 2) m.start = f.varint;
    if (f.number == 3) m.limit = f.varint;
    if (f.number == 4) m.offset = f.varint;
    if (f.number == 5) m.filename = f.varint;
    if (f.number == 6) m.build_id = f.varint;
    if (f.number == 7) m.has_functions = f.varint != 0;
  }
  return m;
}

std::pair<uint64_t, uint64_t> decode_value_type(std::string_view bytes) {
  std::pair<uint64_t, uint64_t> v;
  for (const Field& f : read_fields(bytes)) {
    if (f.number == 1) v.first = f.varint;
    if (f.number == 2) v.second = f.varint;
  }
  return v;
}

Profile decode(std::string_view bytes) {
  Profile p;
  for (const Field& f : read_fields(bytes)) {
    switch (f.number) {
      case 1:
        p.sample_types.push_back(decode_value_type(f.bytes));
        break;
      case 2:
        p.samples.push_back(decode_sample(f.bytes));
        break;
      case 3:
        p.mappings.push_back(decode_mapping(f.bytes));
        break;
      case 4:
        p.locations.push_back(decode_location(f.bytes));
        break;
      case 5:
        p.functions.push_back(decode_function(f.bytes));
        break;
      case 6:
        p.strings.emplace_back(f.bytes);
        break;
      case 9:
        p.time_nanos = static_cast<int64_t>(f.varint);
        ++p.time_nanos_count;
        break;
      case 10:
        p.duration_nanos = static_cast<int64_t>(f.varint);
        break;
      case 11:
        p.period_type = decode_value_type(f.bytes);
        break;
      case 12:
        p.period = static_cast<int64_t>(f.varint);
        break;
      case 13:
        p.comments = read_packed(f.bytes);
        break;
      default:
        break;
    }
  }
  return p;
}

// ---- archives built the way producers build them ----

// pid 100 "app" in container "web": main -> work (work has `inner` inlined) -> leaf address in
// libapp.so; pid 200 "sleep": main -> nanosleep (kernel).
model::Session make_session(uint64_t scale = 1) {
  model::Session s;
  s.header.sampling.event = "cpu-clock";
  s.header.sampling.frequency_hz = 100;  // 10 ms per sample
  s.header.start_time_ns = 1'700'000'000'000'000'000;
  s.trailer = model::Trailer{true, 1'700'000'010'000'000'000, 1, 0, {}};
  model::SessionBuilder b(s);
  model::Process app;
  app.pid = 100;
  app.comm = "app";
  app.container_name = "web";
  b.process(app);
  b.thread(101, 100, "app-worker");
  model::Process sleeper;
  sleeper.pid = 200;
  sleeper.comm = "sleep";
  b.process(sleeper);

  model::Mapping lib;
  lib.pid = 100;
  lib.start = 0x7f0000000000;
  lib.end = 0x7f0000100000;
  lib.path = "/usr/lib/libapp.so";
  lib.build_id = std::string("\xde\xad\xbe\xef\x01", 5);
  uint64_t lib_id = b.mapping(lib);

  uint64_t main_fn = b.function("main", "main.c", 1);
  uint64_t work_fn = b.function("work", "work.c", 10);
  uint64_t inner_fn = b.function("inner", "work.c", 30);
  uint64_t sleep_fn = b.function("do_nanosleep");
  uint64_t main_loc = b.symbolic_location(FrameKind::native, main_fn, 5);
  uint64_t sleep_loc = b.symbolic_location(FrameKind::kernel, sleep_fn);
  // A symbolized location with an inline chain, outermost first as the archive stores it.
  model::Location work;
  work.kind = FrameKind::native;
  work.status = model::SymbolStatus::resolved;
  work.lines = {{work_fn, 12, 0, false}, {inner_fn, 33, 0, true}};
  s.locations.push_back(work);
  uint64_t work_loc = s.locations.size();
  uint64_t leaf = b.address_location(lib_id, 0x7f0000001234, FrameKind::native, false);

  b.add_sample(100, 100, b.stack({leaf, work_loc, main_loc}), 7 * scale);
  b.add_sample(100, 101, b.stack({work_loc, main_loc}), 3 * scale);
  b.add_sample(200, 200, b.stack({sleep_loc, main_loc}), 5 * scale);
  return s;
}

model::Archive archive_of(std::vector<model::Session> sessions) {
  model::Archive a;
  a.sessions = std::move(sessions);
  return a;
}

Profile encode_and_decode(const model::Archive& a) {
  auto bytes = fold::encode_pprof(a);
  if (!bytes) throw std::runtime_error(bytes.error().message);
  return decode(*bytes);
}

TEST(ProtoWriter, EncodesVarintsAndPackedFields) {
  fold::proto::ProtoWriter w;
  w.varint_field(1, 300);  // 08 ac 02
  w.int64_field(2, -1);    // 10 ff ff ff ff ff ff ff ff ff 01
  w.bytes_field(3, "hi");  // 1a 02 68 69
  std::vector<uint64_t> packed = {1, 150};
  w.packed_varints(4, packed);  // 22 03 01 96 01
  std::string want(
      "\x08\xac\x02\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x1a\x02hi"
      "\x22\x03\x01\x96\x01",
      23);
  EXPECT_EQ(w.bytes(), want);
  EXPECT_EQ(fold::proto::varint_size(0), 1u);
  EXPECT_EQ(fold::proto::varint_size(UINT64_MAX), 10u);
}

TEST(Gzip, RoundTripsAndDetectsTruncation) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + "\n";
  auto z = fold::gzip(text);
  ASSERT_TRUE(z.ok()) << z.error().message;
  EXPECT_TRUE(fold::looks_like_gzip(*z));
  EXPECT_LT(z->size(), text.size() / 3);
  auto back = fold::gunzip(*z);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, text);

  auto cut = fold::gunzip(std::string_view(*z).substr(0, z->size() / 2));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("gunzip:"), std::string::npos);
  EXPECT_FALSE(fold::gunzip(*z, 1000).ok());  // over the output limit
}

TEST(Gzip, ReadsConcatenatedMembers) {
  auto a = fold::gzip("first ");
  auto b = fold::gzip("second");
  ASSERT_TRUE(a.ok() && b.ok());
  auto both = fold::gunzip(*a + *b);
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(*both, "first second");
}

TEST(PprofEncoder, StringTableStartsWithEmptyString) {
  Profile p = encode_and_decode(archive_of({make_session()}));
  ASSERT_FALSE(p.strings.empty());
  EXPECT_EQ(p.strings[0], "");
}

TEST(PprofEncoder, TotalsMatchTheArchive) {
  Profile p = encode_and_decode(archive_of({make_session()}));
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[0].first), "samples");
  EXPECT_EQ(p.str(p.sample_types[0].second), "count");
  EXPECT_EQ(p.str(p.sample_types[1].first), "cpu");
  EXPECT_EQ(p.str(p.sample_types[1].second), "nanoseconds");
  EXPECT_EQ(p.total(0), 15);
  EXPECT_EQ(p.total(1), 15 * 10'000'000);
  EXPECT_EQ(p.str(p.period_type.first), "cpu");
  EXPECT_EQ(p.period, 10'000'000);
  EXPECT_EQ(p.time_nanos, 1'700'000'000'000'000'000);
  EXPECT_EQ(p.duration_nanos, 10'000'000'000);
  EXPECT_EQ(p.time_nanos_count, 1);
  for (const auto& s : p.samples) EXPECT_EQ(s.values.size(), 2u);
}

TEST(PprofEncoder, CarriesSamplesAndThePeriodOfAnotherEvent) {
  // perf record -e page-faults -F ...: each sample carries the faults it stands for.
  model::Session s;
  s.header.sampling.event = "page-faults:u";
  s.header.sampling.frequency_hz = 999;
  model::SessionBuilder b(s);
  uint64_t burst = b.symbolic_location(model::FrameKind::native, b.function("burst"));
  uint64_t trickle = b.symbolic_location(model::FrameKind::native, b.function("trickle"));
  b.add_sample(7, 7, b.stack({burst}), 10, 10'000);
  b.add_sample(7, 7, b.stack({trickle}), 90, 900);
  Profile p = encode_and_decode(archive_of({std::move(s)}));
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[0].first), "samples");
  EXPECT_EQ(p.str(p.sample_types[1].first), "page-faults");  // perf printed "page-faults:u"
  EXPECT_EQ(p.str(p.sample_types[1].second), "count");
  EXPECT_EQ(p.total(0), 100);
  EXPECT_EQ(p.total(1), 10'900);
  std::map<std::string, std::vector<int64_t>> values;
  for (const auto& x : p.samples) values[p.stack(x)] = x.values;
  EXPECT_EQ(values["burst"], (std::vector<int64_t>{10, 10'000}));
  EXPECT_EQ(values["trickle"], (std::vector<int64_t>{90, 900}));
}

TEST(PprofEncoder, LabelsEachSampleWithTheCommItWasTakenUnder) {
  model::Session s;
  model::SessionBuilder b(s);
  model::Process p;
  p.pid = 7;
  p.comm = "prog";
  b.process(p);
  uint64_t loc = b.symbolic_location(model::FrameKind::native, b.function("f"));
  b.add_sample(7, 7, b.stack({loc}), 2, 0, -1, "run");
  b.add_sample(7, 7, b.stack({loc}), 3, 0, -1, "prog");
  Profile pr = encode_and_decode(archive_of({std::move(s)}));
  std::map<std::string, int64_t> by_comm;
  for (const auto& x : pr.samples)
    for (const auto& l : x.labels)
      if (pr.str(l.key) == "comm") by_comm[pr.str(l.str)] += x.values[0];
  EXPECT_EQ(by_comm, (std::map<std::string, int64_t>{{"prog", 3}, {"run", 2}}));
}

TEST(PprofEncoder, PutsInnermostInlinedFunctionInLineZero) {
  Profile p = encode_and_decode(archive_of({make_session()}));
  std::map<std::string, int64_t> stacks;
  for (const auto& s : p.samples) stacks[p.stack(s)] += s.values[0];
  std::map<std::string, int64_t> want = {
      {"main;work;inner;?", 7}, {"main;work;inner", 3}, {"main;do_nanosleep", 5}};
  EXPECT_EQ(stacks, want);
  // Line numbers travel with their function.
  for (const auto& loc : p.locations) {
    if (loc.lines.size() == 2) {
      EXPECT_EQ(p.str(p.function(loc.lines[0].function).name), "inner");
      EXPECT_EQ(loc.lines[0].line, 33);
      EXPECT_EQ(loc.lines[1].line, 12);
    }
  }
}

TEST(PprofEncoder, WritesMappingWithHexBuildIdAndAddress) {
  Profile p = encode_and_decode(archive_of({make_session()}));
  ASSERT_EQ(p.mappings.size(), 1u);
  const Mapping& m = p.mappings[0];
  EXPECT_EQ(m.id, 1u);
  EXPECT_EQ(p.str(m.filename), "/usr/lib/libapp.so");
  EXPECT_EQ(p.str(m.build_id), "deadbeef01");
  EXPECT_EQ(m.start, 0x7f0000000000u);
  EXPECT_EQ(m.limit, 0x7f0000100000u);
  // Its only location is an unresolved address: pprof may symbolize it with local binaries.
  EXPECT_FALSE(m.has_functions);
  int with_mapping = 0;
  for (const auto& loc : p.locations) {
    if (loc.mapping == 1) {
      ++with_mapping;
      EXPECT_EQ(loc.address, 0x7f0000001234u);
      EXPECT_TRUE(loc.lines.empty());
    }
  }
  EXPECT_EQ(with_mapping, 1);
}

// pprof names the first mapping of the file as the profile's binary ("File: ..." in reports).
TEST(PprofEncoder, WritesAnExecutableMappingFirst) {
  model::Session s = make_session();
  model::SessionBuilder b(s);
  model::Mapping kernel;
  kernel.kind = model::MappingKind::kernel;
  kernel.path = "[kernel.kallsyms]";
  kernel.start = 0xffffffff81000000;
  kernel.end = 0xffffffff82000000;
  model::Mapping exe;
  exe.pid = 100;
  exe.path = "/usr/bin/app";
  exe.start = 0x400000;
  exe.end = 0x500000;
  uint64_t k = b.address_location(b.mapping(kernel), 0xffffffff81001000, FrameKind::kernel, false);
  uint64_t e = b.address_location(b.mapping(exe), 0x401000, FrameKind::native, true);
  b.add_sample(100, 100, b.stack({k, e}), 1);
  Profile p = encode_and_decode(archive_of({s}));
  ASSERT_EQ(p.mappings.size(), 3u);
  EXPECT_EQ(p.str(p.mappings[0].filename), "/usr/bin/app");
}

TEST(PprofEncoder, LabelsSamplesWithPidTidCommAndContainer) {
  Profile p = encode_and_decode(archive_of({make_session()}));
  std::map<std::string, int64_t> by_comm;
  for (const auto& s : p.samples) {
    std::string comm = p.label_str(s, "comm");
    by_comm[comm] += s.values[0];
    if (comm == "app") {
      EXPECT_EQ(p.label_num(s, "pid"), 100);
      EXPECT_EQ(p.label_str(s, "container"), "web");
      EXPECT_TRUE(p.label_num(s, "tid") == 100 || p.label_num(s, "tid") == 101);
    } else {
      EXPECT_EQ(p.label_num(s, "pid"), 200);
      EXPECT_EQ(p.label_str(s, "container"), "<none>");
    }
  }
  std::map<std::string, int64_t> want = {{"app", 10}, {"sleep", 5}};
  EXPECT_EQ(by_comm, want);
  // No process frame: no function is named after a comm.
  for (const auto& f : p.functions) {
    EXPECT_NE(p.str(f.name), "app");
    EXPECT_NE(p.str(f.name), "sleep");
  }
}

TEST(PprofEncoder, TextInputsGetNoPidLabels) {
  model::Session s = make_session();
  s.header.source = model::SourceKind::folded;
  Profile p = encode_and_decode(archive_of({s}));
  for (const auto& smp : p.samples) {
    EXPECT_EQ(p.label_num(smp, "pid"), -1);
    EXPECT_EQ(p.label_num(smp, "tid"), -1);
    EXPECT_NE(p.label_str(smp, "comm"), "<none>");
  }
}

TEST(PprofEncoder, IdsAreUniqueNonZeroAndResolve) {
  Profile p = encode_and_decode(archive_of({make_session(), make_session(2)}));
  std::set<uint64_t> locs, fns, maps;
  for (const auto& l : p.locations) EXPECT_TRUE(l.id != 0 && locs.insert(l.id).second);
  for (const auto& f : p.functions) EXPECT_TRUE(f.id != 0 && fns.insert(f.id).second);
  for (const auto& m : p.mappings) EXPECT_TRUE(m.id != 0 && maps.insert(m.id).second);
  for (const auto& s : p.samples) {
    for (uint64_t id : s.locations) EXPECT_TRUE(locs.count(id)) << id;
  }
  for (const auto& l : p.locations) {
    if (l.mapping != 0) {
      EXPECT_TRUE(maps.count(l.mapping));
    }
    for (const auto& line : l.lines) EXPECT_TRUE(fns.count(line.function));
  }
  for (const auto& f : p.functions) EXPECT_LT(f.name, p.strings.size());
}

TEST(PprofEncoder, MergesSessionsIntoOneProfile) {
  model::Session later = make_session(2);
  later.header.start_time_ns += 60'000'000'000;
  later.trailer->end_time_ns += 60'000'000'000;
  Profile p = encode_and_decode(archive_of({make_session(), later}));
  EXPECT_EQ(p.total(0), 15 + 30);
  // Equal tables are shared, not repeated per session.
  EXPECT_EQ(p.functions.size(), 4u);
  EXPECT_EQ(p.locations.size(), 4u);
  EXPECT_EQ(p.mappings.size(), 1u);
  EXPECT_EQ(p.time_nanos_count, 1);
  EXPECT_EQ(p.duration_nanos, 70'000'000'000);
}

TEST(PprofEncoder, OnlyCountsWhenSampleLengthIsUnknown) {
  model::Session s = make_session();
  s.header.sampling.event = "cycles";
  s.header.sampling.frequency_hz = 0;
  s.header.sampling.period = 100000;
  Profile p = encode_and_decode(archive_of({s}));
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(p.str(p.sample_types[0].first), "samples");
  EXPECT_EQ(p.str(p.period_type.first), "cycles");
  EXPECT_EQ(p.period, 100000);
  for (const auto& smp : p.samples) EXPECT_EQ(smp.values.size(), 1u);
}

TEST(PprofEncoder, UsesCpuClockWeightsWhenGiven) {
  model::Session s = make_session();
  s.header.sampling.frequency_hz = 0;
  for (auto& smp : s.samples) smp.weight = smp.count * 1'000'000;  // 1 ms each
  Profile p = encode_and_decode(archive_of({s}));
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.total(1), 15'000'000);
  EXPECT_EQ(p.period, 1'000'000);
}

TEST(PprofEncoder, ReplacesInvalidUtf8InStrings) {
  model::Session s = make_session();
  s.functions[0].name = std::string("ma\xffin\xc3", 6);
  Profile p = encode_and_decode(archive_of({s}));
  bool found = false;
  for (const auto& str : p.strings) found |= str == "ma\xEF\xBF\xBDin\xEF\xBF\xBD";
  EXPECT_TRUE(found);
}

TEST(PprofEncoder, RejectsUnresolvableIds) {
  model::Session s = make_session();
  s.samples[0].stack_id = 99;
  auto bytes = fold::encode_pprof(archive_of({s}));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().message, "sample refers to stack 99 of 3");
  s = make_session();
  s.stacks[0].location_ids.push_back(42);
  bytes = fold::encode_pprof(archive_of({make_session(), s}));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().message, "session 2: stack refers to location 42 of 4");
}

TEST(PprofEncoder, WritePprofGzipsTheEncodedProfile) {
  model::Archive a = archive_of({make_session()});
  std::ostringstream out;
  ASSERT_TRUE(fold::write_pprof(a, out).ok());
  std::string z = out.str();
  ASSERT_TRUE(fold::looks_like_gzip(z));
  auto raw = fold::gunzip(z);
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(*raw, *fold::encode_pprof(a));
}

TEST(PprofEncoder, EmptyArchiveIsAValidProfile) {
  Profile p = encode_and_decode(model::Archive{});
  EXPECT_EQ(p.strings.at(0), "");
  EXPECT_TRUE(p.samples.empty());
  EXPECT_FALSE(p.sample_types.empty());
}

// ---- the real parser: github.com/google/pprof/profile and the pprof CLI ----

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string validator() {
  return std::string("GP_PPROF_TOOLS_DIR='") + GP_PPROF_TOOLS_DIR + "' '" + GP_TEST_DATA_DIR +
         "/pprof/validate.sh'";
}

std::string write_temp_profile(const model::Archive& a, const std::string& name) {
  std::string path = testing::TempDir() + name;
  std::ofstream f(path, std::ios::binary);
  EXPECT_TRUE(fold::write_pprof(a, f).ok());
  f.close();
  return path;
}

TEST(PprofGo, ProfileParserAcceptsOutputWithSameTotals) {
  model::Session later = make_session(2);
  later.processes[0].comm = std::string("bad\xff", 4);
  std::string path =
      write_temp_profile(archive_of({make_session(), later}), "gp_pprof_check.pb.gz");
  CommandResult r = run_command(validator() + " check '" + path + "'");
  if (r.status == 77) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  const char* want[] = {
      "type samples/count\n",
      "total samples/count 45\n",
      "type cpu/nanoseconds\n",
      "total cpu/nanoseconds 450000000\n",
      "period cpu/nanoseconds 10000000\n",
      "time_nanos 1700000000000000000 duration_nanos 10000000000\n",
      "counts samples=6 locations=4 functions=4 mappings=1\n",
      "mapping /usr/lib/libapp.so build_id=deadbeef01 functions=false\n",
      "stack main;do_nanosleep 15\n",
      "stack main;work;inner 9\n",
      "stack main;work;inner;0x7f0000001234 21\n",
      "label comm=app 10\n",
      "label comm=bad\xEF\xBF\xBD 20\n",
      "label comm=sleep 15\n",
      "label container=web 30\n",
      "label pid=100 30\n",
      "label tid=101 9\n",
  };
  for (const char* line : want)
    EXPECT_NE(r.output.find(line), std::string::npos) << line << r.output;
}

// An archive made by the real pipeline (checked in): every sample survives, and the
// per-pid totals pprof sees equal the archive's.
TEST(PprofGo, CheckedInArchiveKeepsItsTotals) {
  auto a = gp::archive::read_archive(std::string(GP_TEST_DATA_DIR) +
                                     "/fixtures/archives/format-1.0.gpa");
  ASSERT_TRUE(a.ok()) << a.error().message;
  std::map<int32_t, uint64_t> per_pid;
  uint64_t total = 0;
  for (const auto& s : a->sessions) {
    for (const auto& smp : s.samples) per_pid[smp.pid] += smp.count;
    total += s.total_samples();
  }
  ASSERT_GT(total, 0u);
  std::string path = write_temp_profile(*a, "gp_pprof_fixture.pb.gz");
  CommandResult r = run_command(validator() + " check '" + path + "'");
  if (r.status == 77) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("total samples/count " + std::to_string(total) + "\n"), std::string::npos)
      << r.output;
  for (auto [pid, n] : per_pid) {
    std::string line = "label pid=" + std::to_string(pid) + " " + std::to_string(n) + "\n";
    EXPECT_NE(r.output.find(line), std::string::npos) << line << r.output;
  }
}

TEST(PprofGo, PprofToolPrintsTop) {
  std::string path = write_temp_profile(archive_of({make_session()}), "gp_pprof_top.pb.gz");
  CommandResult r = run_command(validator() + " top '" + path + "'");
  if (r.status == 77) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  // 15 samples of 10 ms; do_nanosleep is flat 50 ms, main is cumulative 150 ms.
  EXPECT_NE(r.output.find("Type: cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("150ms total"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("do_nanosleep"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("inner"), std::string::npos) << r.output;
}

// Python's "<module>" and a Java signature with "[": pprof blanks or cuts a name whose
// system_name equals it (it takes it for simplified C++), so such functions carry no
// system_name; a real linkage name is kept.
model::Session runtime_names_session() {
  model::Session s;
  model::SessionBuilder b(s);
  model::Process py;
  py.pid = 300;
  py.comm = "python3";
  b.process(py);
  uint64_t module = b.function("<module>", "/srv/app.py", 1);
  uint64_t main_fn = b.function("main", "/srv/app.py", 10);
  uint64_t java = b.function("Foo.bar([Ljava/lang/String;)V");
  uint64_t cpp =
      b.function("ns::Stack<int>::push(int const&)", "stack.cc", 3, "_ZN2ns5StackIiE4pushERKi");
  b.add_sample(300, 300,
               b.stack({b.symbolic_location(FrameKind::native, cpp, 4),
                        b.symbolic_location(FrameKind::java, java),
                        b.symbolic_location(FrameKind::python, main_fn, 11),
                        b.symbolic_location(FrameKind::python, module, 2)}),
               4);
  return s;
}

TEST(PprofEncoder, RuntimeNamesHaveNoSystemNameForPprofToSimplify) {
  Profile p = encode_and_decode(archive_of({runtime_names_session()}));
  std::map<std::string, std::string> system_names;
  for (const auto& f : p.functions) system_names[p.str(f.name)] = p.str(f.system_name);
  ASSERT_EQ(system_names.size(), 4u);
  EXPECT_EQ(system_names.at("<module>"), "");
  EXPECT_EQ(system_names.at("main"), "");
  EXPECT_EQ(system_names.at("Foo.bar([Ljava/lang/String;)V"), "");
  EXPECT_EQ(system_names.at("ns::Stack<int>::push(int const&)"), "_ZN2ns5StackIiE4pushERKi");
}

TEST(PprofGo, PprofToolShowsEveryNameWithItsDefaultSymbolization) {
  std::string path =
      write_temp_profile(archive_of({runtime_names_session()}), "gp_pprof_names.pb.gz");
  CommandResult r = run_command(validator() + " top-default '" + path + "'");
  if (r.status == 77) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(" <module>\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" Foo.bar([Ljava/lang/String;)V\n"), std::string::npos) << r.output;
  // A function with its own linkage name is one pprof takes as demangled already.
  EXPECT_NE(r.output.find(" ns::Stack<int>::push(int const&)\n"), std::string::npos) << r.output;
}

// A cut stack gets a last (outermost) "[truncated]" location with no mapping; complete and
// unknown ends get nothing; the option leaves the marker out.
TEST(PprofEncoder, MarksTruncatedStacksAtTheirRoot) {
  model::Archive a = stack_end_fixture::archive();
  Profile p = encode_and_decode(a);
  std::map<std::string, int64_t> stacks;
  for (const Sample& smp : p.samples) stacks[p.stack(smp)] += smp.values.at(0);
  EXPECT_EQ(stacks["main;loop;spin"], 7);
  EXPECT_EQ(stacks["[truncated];deep;deep;spin"], 3);
  EXPECT_EQ(stacks["[truncated];deep;spin;read"], 2);
  EXPECT_EQ(stacks["[truncated];?;?"], 1);
  EXPECT_EQ(stacks.size(), 4u);
  size_t markers = 0;
  for (const Location& l : p.locations) {
    if (l.lines.size() == 1 && p.str(p.function(l.lines[0].function).name) == "[truncated]") {
      ++markers;
      EXPECT_EQ(l.mapping, 0u);
      EXPECT_EQ(l.address, 0u);
    }
  }
  EXPECT_EQ(markers, 1u);  // one location shared by every cut stack

  auto bytes = fold::encode_pprof(a, fold::PprofOptions{.truncated_marker = false});
  ASSERT_TRUE(bytes.ok());
  Profile hidden = decode(*bytes);
  std::map<std::string, int64_t> plain;
  for (const Sample& smp : hidden.samples) plain[hidden.stack(smp)] += smp.values.at(0);
  EXPECT_EQ(plain["deep;deep;spin"], 3);
  EXPECT_EQ(plain.count("[truncated];deep;deep;spin"), 0u);
}

}  // namespace
}  // namespace gp::test::pprof
