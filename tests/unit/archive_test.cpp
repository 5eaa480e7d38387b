// Archive reader/writer: round trips, compression, concatenation, truncation and garbage.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "archive.capnp.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/model/builder.h"

namespace gp::test::archive {
namespace {

using gp::archive::InputStream;
using gp::archive::OutputStream;
using gp::archive::Writer;
using gp::archive::WriterOptions;

model::Session make_session(int pids, int stacks_per_pid) {
  model::Session s;
  s.header.producer = "archive_test";
  s.header.host.hostname = "h1";
  s.header.sampling.frequency_hz = 99;
  model::SessionBuilder b(s);
  for (int p = 1; p <= pids; ++p) {
    model::Process proc;
    proc.pid = 1000 + p;
    proc.comm = "proc" + std::to_string(p);
    proc.cmdline = {"/bin/proc", "--flag"};
    b.process(proc);
    model::Mapping m;
    m.pid = proc.pid;
    m.start = 0x400000;
    m.end = 0x500000;
    m.path = "/bin/proc";
    m.build_id = std::string("\x01\x02\x03\x04", 4);
    uint64_t mid = b.mapping(m);
    for (int k = 0; k < stacks_per_pid; ++k) {
      uint64_t f = b.function("fn" + std::to_string(k), "file.c", 10);
      uint64_t sym = b.symbolic_location(model::FrameKind::native, f, 12);
      uint64_t addr = b.address_location(mid, 0x401000 + k * 16, model::FrameKind::native, true);
      uint64_t st = b.stack({sym, addr});
      b.add_sample(proc.pid, proc.pid, st, k + 1);
    }
  }
  s.set_counter("samples.lost", 7);
  return s;
}

std::string write(model::Session s, bool compress, size_t chunk_bytes = 512u << 10) {
  std::string out;
  auto stream = OutputStream::to_string(&out, compress);
  WriterOptions opt;
  opt.chunk_bytes = chunk_bytes;
  Writer w(*stream, opt);
  EXPECT_TRUE(w.write_session(s).ok());
  EXPECT_TRUE(stream->close().ok());
  return out;
}

Result<model::Archive> read(const std::string& bytes) {
  auto in = InputStream::from_memory(bytes);
  return gp::archive::read_archive(*in);
}

uint64_t total(const model::Archive& a) {
  uint64_t n = 0;
  for (const auto& s : a.sessions) n += s.total_samples();
  return n;
}

TEST(ArchiveWriter, RoundTripsEveryTable) {
  model::Session s = make_session(3, 4);
  s.kernel_symbols.push_back({0xffffffff81000000, "do_syscall_64", "", 'T'});
  s.jit_maps.push_back({1001, "/tmp/perf-1001.map", {{0x1000, 0x20, "LazyCompile:*fib"}}});
  auto bytes = write(s, false);
  auto a = read(bytes);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->sessions.size(), 1u);
  EXPECT_FALSE(a->truncated);
  const auto& r = a->sessions[0];
  EXPECT_EQ(r.header.producer, "archive_test");
  EXPECT_EQ(r.header.host.hostname, "h1");
  EXPECT_EQ(r.header.sampling.frequency_hz, 99u);
  EXPECT_EQ(r.processes.size(), 3u);
  EXPECT_EQ(r.processes[1].cmdline[1], "--flag");
  EXPECT_EQ(r.mappings[0].build_id, std::string("\x01\x02\x03\x04", 4));
  EXPECT_EQ(r.functions.size(), 4u);  // fn0..fn3 shared across processes
  EXPECT_EQ(r.total_samples(), 3u * (1 + 2 + 3 + 4));
  EXPECT_EQ(r.location(r.stacks[0].location_ids[1]).file_offset, 0x1000u);
  EXPECT_EQ(r.kernel_symbols.at(0).name, "do_syscall_64");
  EXPECT_EQ(r.jit_maps.at(0).entries.at(0).name, "LazyCompile:*fib");
  EXPECT_EQ(r.counter("samples.lost"), 7);
  ASSERT_TRUE(r.trailer.has_value());
  EXPECT_TRUE(r.trailer->clean_close);
  EXPECT_EQ(r.trailer->sample_count, r.total_samples());
}

TEST(ArchiveWriter, CompressedStreamReadsTheSame) {
  auto plain = read(write(make_session(5, 50), false));
  auto packed_bytes = write(make_session(5, 50), true);
  auto packed = read(packed_bytes);
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  EXPECT_EQ(packed_bytes.substr(0, 4), std::string("\x04\x22\x4d\x18", 4));
  EXPECT_EQ(total(*packed), total(*plain));
  EXPECT_EQ(packed->sessions[0].stacks.size(), plain->sessions[0].stacks.size());
}

TEST(ArchiveWriter, SplitsLargeSessionsIntoSmallChunks) {
  auto bytes = write(make_session(20, 200), false, 4096);
  auto a = read(bytes);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->truncated) << a->problem;
  EXPECT_GT(a->sessions[0].trailer->chunk_count, 20u);
  EXPECT_EQ(total(*a), 20u * (200 * 201 / 2));
}

TEST(ArchiveReader, ConcatenatedStreamsAreSessionsInOrder) {
  auto one = write(make_session(1, 1), true);
  auto two = write(make_session(2, 2), false);
  auto a = read(one + two + one);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->sessions.size(), 3u);
  EXPECT_FALSE(a->truncated);
  EXPECT_EQ(a->sessions[1].processes.size(), 2u);
}

TEST(ArchiveReader, KeepsPrefixOfTruncatedStream) {
  auto bytes = write(make_session(20, 100), false, 2048);
  // Samples come after the tables they use, so cut late enough to reach some of them.
  auto cut = read(bytes.substr(0, bytes.size() * 9 / 10));
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->truncated);
  EXPECT_NE(cut->problem.find("truncated"), std::string::npos);
  ASSERT_EQ(cut->sessions.size(), 1u);
  EXPECT_GT(cut->sessions[0].total_samples(), 0u);
  EXPECT_LT(cut->sessions[0].total_samples(), total(*read(bytes)));
}

TEST(ArchiveReader, KeepsPrefixOfTruncatedCompressedStream) {
  auto bytes = write(make_session(20, 100), true, 2048);
  // Samples come after the tables they use, so cut late enough to reach some of them.
  auto cut = read(bytes.substr(0, bytes.size() * 9 / 10));
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_TRUE(cut->truncated);
  EXPECT_GT(cut->sessions.at(0).total_samples(), 0u);
}

TEST(ArchiveReader, EveryCutPointGivesPrefixOrError) {
  auto bytes = write(make_session(3, 5), false, 256);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    auto a = read(bytes.substr(0, n));
    if (a.ok()) {
      EXPECT_TRUE(a->truncated) << "cut at " << n;
    }
  }
}

TEST(ArchiveReader, RejectsGarbageWithClearError) {
  for (std::string junk :
       {std::string("hello world, this is not an archive\n"), std::string(64, '\0'),
        std::string("\x04\x22\x4d\x18garbage", 11), std::string()}) {
    auto a = read(junk);
    ASSERT_FALSE(a.ok());
    EXPECT_FALSE(a.error().message.empty());
  }
}

TEST(ArchiveReader, FlippedBytesNeverCrash) {
  auto bytes = write(make_session(4, 6), false, 512);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    std::string copy = bytes;
    copy[i] = static_cast<char>(copy[i] ^ 0x5a);
    auto a = read(copy);  // data, a truncated prefix or an error: all fine, but no crash
    if (!a.ok()) continue;
    for (const auto& s : a->sessions)
      for (const auto& smp : s.samples) EXPECT_LE(smp.stack_id, s.stacks.size());
  }
}

TEST(ArchiveReader, RejectsNewerMajorFormat) {
  // Patch formatMajor in a header written by this version: find the header message's data.
  model::Session s = make_session(1, 1);
  auto bytes = write(s, false);
  // Header struct data section: magic (8 bytes) then formatMajor (u16).
  std::string magic("gparchv1", 8);
  auto pos = bytes.find(magic);
  ASSERT_NE(pos, std::string::npos);
  bytes[pos + 8] = 9;
  auto a = read(bytes);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("newer"), std::string::npos);
}

// Readers accept any minor of their major (formats/README.md §7): an archive written by a newer
// minor is read as it is, with the fields this version knows, and no warning.
TEST(ArchiveReader, ReadsNewerMinorFormat) {
  model::Session s = make_session(2, 3);
  auto bytes = write(s, false);
  std::string magic("gparchv1", 8);
  auto pos = bytes.find(magic);
  ASSERT_NE(pos, std::string::npos);
  // formatMinor (u16) follows formatMajor in the header's data section.
  ASSERT_EQ(static_cast<uint8_t>(bytes[pos + 10]), schema::FORMAT_MINOR);
  bytes[pos + 10] = static_cast<char>(schema::FORMAT_MINOR + 7);
  auto a = read(bytes);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->truncated) << a->problem;
  ASSERT_EQ(a->sessions.size(), 1u);
  const model::Session& got = a->sessions[0];
  EXPECT_EQ(got.header.format_major, schema::FORMAT_MAJOR);
  EXPECT_EQ(got.header.format_minor, schema::FORMAT_MINOR + 7);
  EXPECT_EQ(got.samples.size(), s.samples.size());
  EXPECT_EQ(got.total_samples(), s.total_samples());
}

TEST(ArchiveReader, UnclosedSessionIsTruncated) {
  model::Session s = make_session(1, 3);
  std::string out;
  auto stream = OutputStream::to_string(&out, false);
  Writer w(*stream);
  ASSERT_TRUE(w.begin_session(s).ok());
  ASSERT_TRUE(w.write_chunk(s).ok());
  auto a = read(out + write(make_session(2, 1), false));
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->truncated);
  ASSERT_EQ(a->sessions.size(), 2u);  // the next session's header ends the cut one
  EXPECT_TRUE(a->sessions[0].truncated);
  EXPECT_FALSE(a->sessions[1].truncated);
  EXPECT_EQ(a->sessions[0].total_samples(), 6u);
}

// A reader that sniffed the first bytes of a pipe hands them back with the fd (gp-fold reading
// an archive on standard input): the archive reads as a whole, plain or compressed, whether the
// sniffed part is a few bytes or more than the stream's read buffer.
TEST(ArchiveReader, ReadsAnFdAfterTheBytesAlreadyTakenFromIt) {
  for (bool compress : {false, true}) {
    const std::string bytes = write(make_session(40, 300), compress, 64u << 10);
    auto whole = read(bytes);
    ASSERT_TRUE(whole.ok()) << whole.error().message;
    ASSERT_GT(bytes.size() / 2, size_t{1} << 16) << "the archive must outgrow the read buffer";
    for (size_t taken : {size_t{8}, bytes.size() / 2}) {
      std::FILE* f = std::tmpfile();
      ASSERT_NE(f, nullptr);
      ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
      std::fflush(f);
      int fd = ::fileno(f);
      ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
      std::string first(taken, '\0');
      ASSERT_EQ(::read(fd, first.data(), taken), static_cast<ssize_t>(taken));
      auto in = InputStream::from_fd(fd, "pipe", first);
      auto a = gp::archive::read_archive(*in);
      std::fclose(f);
      ASSERT_TRUE(a.ok()) << a.error().message;
      EXPECT_FALSE(a->truncated) << "compress " << compress << ", taken " << taken;
      EXPECT_EQ(total(*a), total(*whole));
      EXPECT_EQ(a->sessions[0].stacks.size(), whole->sessions[0].stacks.size());
    }
  }
}

TEST(ArchiveReader, LooksLikeArchiveTellsTextFromBinary) {
  EXPECT_TRUE(gp::archive::looks_like_archive(write(make_session(1, 1), false)));
  EXPECT_TRUE(gp::archive::looks_like_archive(write(make_session(1, 1), true)));
  EXPECT_FALSE(gp::archive::looks_like_archive("# {\"containers\": []}\n"));
  EXPECT_FALSE(gp::archive::looks_like_archive("bash 123/123 [000] 1.0: cpu-clock:\n"));
}

// Streaming: Reader::next_event and Writer::write_delta.

using gp::archive::ChunkDelta;
using gp::archive::Reader;
using gp::archive::ReadEvent;

// Every event of a stream, stopping after end_of_stream or an Error.
struct Events {
  std::vector<ReadEvent> events;
  std::string error;    // the Error, if one ended the stream
  std::string problem;  // reader.problem() at the end
};
Events read_events(const std::string& bytes) {
  auto in = InputStream::from_memory(bytes);
  Reader reader(*in);
  Events out;
  for (int guard = 0; guard < 1000000; ++guard) {
    auto ev = reader.next_event();
    if (!ev) {
      out.error = ev.error().message;
      break;
    }
    out.events.push_back(std::move(*ev));
    if (out.events.back().kind == ReadEvent::Kind::end_of_stream) break;
  }
  out.problem = reader.problem();
  return out;
}

size_t count_chunks(const Events& e) {
  size_t n = 0;
  for (const auto& ev : e.events) n += ev.kind == ReadEvent::Kind::chunk;
  return n;
}

TEST(ArchiveStream, EventsAreHeaderChunksWithRunningBasesThenEnd) {
  auto bytes = write(make_session(5, 20), false, 2048);
  auto whole = read(bytes);
  ASSERT_TRUE(whole.ok());
  const model::Session& s = whole->sessions.at(0);
  Events e = read_events(bytes);
  ASSERT_TRUE(e.error.empty()) << e.error;
  ASSERT_GE(e.events.size(), 4u);
  EXPECT_EQ(e.events.front().kind, ReadEvent::Kind::header);
  EXPECT_EQ(e.events.front().header.host.hostname, "h1");
  EXPECT_EQ(e.events.back().kind, ReadEvent::Kind::end_of_stream);
  const ReadEvent& end = e.events[e.events.size() - 2];
  ASSERT_EQ(end.kind, ReadEvent::Kind::end_of_session);
  EXPECT_FALSE(end.truncated);
  ASSERT_TRUE(end.trailer.has_value());
  EXPECT_EQ(end.trailer->chunk_count, count_chunks(e));
  EXPECT_GT(count_chunks(e), 3u);

  // Deltas follow each other, and their entries are the session's, id for id.
  gp::archive::TableCounts counts;
  uint64_t samples = 0;
  for (const auto& ev : e.events) {
    if (ev.kind != ReadEvent::Kind::chunk) continue;
    EXPECT_TRUE(ev.chunk.base == counts);
    const auto& d = ev.chunk.entries;
    for (size_t i = 0; i < d.locations.size(); ++i) {
      const auto& want = s.location(counts.locations + i + 1);
      EXPECT_EQ(d.locations[i].address, want.address);
      EXPECT_EQ(d.locations[i].lines.size(), want.lines.size());
    }
    for (size_t i = 0; i < d.stacks.size(); ++i)
      EXPECT_EQ(d.stacks[i].location_ids, s.stack(counts.stacks + i + 1).location_ids);
    for (const auto& smp : d.samples) samples += smp.count;
    counts = counts.plus(d);
  }
  EXPECT_EQ(counts.locations, s.locations.size());
  EXPECT_EQ(counts.functions, s.functions.size());
  EXPECT_EQ(samples, s.total_samples());
}

// Copying every delta with write_delta rewrites the stream byte for byte.
std::string copy_by_deltas(const std::string& bytes, size_t chunk_bytes) {
  std::string out;
  auto stream = OutputStream::to_string(&out, false);
  WriterOptions opt;
  opt.chunk_bytes = chunk_bytes;
  Writer w(*stream, opt);
  Events e = read_events(bytes);
  EXPECT_TRUE(e.error.empty()) << e.error;
  for (auto& ev : e.events) {
    if (ev.kind == ReadEvent::Kind::header) {
      model::Session head;
      head.header = ev.header;
      EXPECT_TRUE(w.begin_session(head).ok());
    } else if (ev.kind == ReadEvent::Kind::chunk) {
      EXPECT_TRUE(w.write_delta(ev.chunk).ok());
    } else if (ev.kind == ReadEvent::Kind::end_of_session) {
      EXPECT_TRUE(w.end_deltas(ev.trailer.value_or(model::Trailer{}), !ev.truncated).ok());
    }
  }
  EXPECT_TRUE(stream->close().ok());
  return out;
}

TEST(ArchiveStream, DeltasWrittenAgainGiveTheSameBytes) {
  auto one = write(make_session(5, 20), false, 2048);
  auto two = write(make_session(2, 3), false, 2048);
  EXPECT_EQ(copy_by_deltas(one + two, 2048), one + two);
}

TEST(ArchiveStream, WriteDeltaRefusesAGapInTheIds) {
  std::string out;
  auto stream = OutputStream::to_string(&out, false);
  Writer w(*stream);
  model::Session head = make_session(1, 1);
  ASSERT_TRUE(w.begin_session(head).ok());
  ChunkDelta d;
  d.base.locations = 3;  // nothing was written: ids would shift by 3
  d.entries.locations.resize(1);
  auto st = w.write_delta(d);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("ids would shift"), std::string::npos);
}

TEST(ArchiveStream, LocationUpdatesOfEarlierChunksAreKeptNotApplied) {
  model::Session s;
  model::SessionBuilder b(s);
  uint64_t f = b.function("late_name", "", 0);
  uint64_t loc = b.address_location(0, 0x1234, model::FrameKind::native, false);
  b.add_sample(1, 1, b.stack({loc}), 1);
  std::string out;
  auto stream = OutputStream::to_string(&out, false);
  Writer w(*stream);
  ASSERT_TRUE(w.begin_session(s).ok());
  ASSERT_TRUE(w.write_chunk(s).ok());
  s.location_updates.push_back(
      {loc, {{f, 0, 0, false}}, model::SymbolStatus::resolved, model::FrameKind::native});
  ASSERT_TRUE(w.end_session(s).ok());
  ASSERT_TRUE(stream->close().ok());

  Events e = read_events(out);
  ASSERT_TRUE(e.error.empty());
  ASSERT_EQ(count_chunks(e), 2u);
  const auto& second = e.events[2];
  ASSERT_EQ(second.kind, ReadEvent::Kind::chunk);
  EXPECT_EQ(second.chunk.base.locations, 1u);
  ASSERT_EQ(second.chunk.entries.location_updates.size(), 1u);
  EXPECT_EQ(second.chunk.entries.location_updates[0].location_id, loc);
  auto whole = read(out);  // next() applies it
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->sessions[0].location(loc).status, model::SymbolStatus::resolved);
}

TEST(ArchiveStream, EveryCutPointGivesTheChunksNextKeeps) {
  auto bytes = write(make_session(3, 5), false, 256);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    std::string cut = bytes.substr(0, n);
    auto a = read(cut);
    Events e = read_events(cut);
    if (!a.ok()) {
      EXPECT_FALSE(e.error.empty()) << "cut at " << n;
      continue;
    }
    ASSERT_TRUE(e.error.empty()) << "cut at " << n << ": " << e.error;
    ASSERT_GE(e.events.size(), 3u);
    const ReadEvent& end = e.events[e.events.size() - 2];
    EXPECT_EQ(end.kind, ReadEvent::Kind::end_of_session);
    EXPECT_TRUE(end.truncated) << "cut at " << n;
    EXPECT_FALSE(e.problem.empty());
    uint64_t samples = 0;
    for (const auto& ev : e.events)
      for (const auto& smp : ev.chunk.entries.samples) samples += smp.count;
    EXPECT_EQ(samples, a->sessions.at(0).total_samples()) << "cut at " << n;
  }
}

TEST(ArchiveStream, FlippedBytesNeverCrashAndReferencesStayInRange) {
  auto bytes = write(make_session(4, 6), false, 512);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    std::string copy = bytes;
    copy[i] = static_cast<char>(copy[i] ^ 0x5a);
    Events e = read_events(copy);
    for (const auto& ev : e.events) {
      if (ev.kind != ReadEvent::Kind::chunk) continue;
      auto after = ev.chunk.base.plus(ev.chunk.entries);
      for (const auto& smp : ev.chunk.entries.samples) EXPECT_LE(smp.stack_id, after.stacks);
      for (const auto& u : ev.chunk.entries.location_updates)
        EXPECT_LE(u.location_id, after.locations);
    }
  }
}

}  // namespace
}  // namespace gp::test::archive
