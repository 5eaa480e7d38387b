// What the archive reader keeps and refuses when the input is cut or hostile (formats/README.md
// §5, §6): a killed recorder's LZ4 stream loses no finished chunk, a trailer must match the
// session it closes, and a message cannot make the reader materialise more than it holds.

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <lz4frame.h>

#include <cstring>
#include <string>
#include <vector>

#include "archive.capnp.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/model/builder.h"

namespace gp::test::archive {
namespace {

using gp::archive::InputStream;
using gp::archive::OutputStream;
using gp::archive::Reader;
using gp::archive::ReadEvent;
using gp::archive::Writer;

// A recording's worth of distinct stacks: enough data for many 256 KiB LZ4 blocks.
model::Session recording(int pids, int stacks_per_pid) {
  model::Session s;
  s.header.producer = "archive_trust_test";
  model::SessionBuilder b(s);
  for (int p = 1; p <= pids; ++p) {
    model::Process proc;
    proc.pid = 2000 + p;
    proc.comm = "worker" + std::to_string(p);
    b.process(proc);
    model::Mapping m;
    m.pid = proc.pid;
    m.start = 0x400000;
    m.end = 0x900000;
    m.path = "/usr/bin/worker";
    uint64_t mid = b.mapping(m);
    for (int k = 0; k < stacks_per_pid; ++k) {
      uint64_t f = b.function("function_number_" + std::to_string(p * 100000 + k), "src.c", k);
      uint64_t sym = b.symbolic_location(model::FrameKind::native, f, k + 1);
      uint64_t addr =
          b.address_location(mid, 0x401000 + (p * 7919 + k) * 48, model::FrameKind::native, true);
      b.add_sample(proc.pid, proc.pid + k % 5, b.stack({sym, addr}), k % 13 + 1);
    }
  }
  return s;
}

std::string write(model::Session s, bool compress, size_t chunk_bytes = 512u << 10) {
  std::string out;
  auto stream = OutputStream::to_string(&out, compress);
  gp::archive::WriterOptions options;
  options.chunk_bytes = chunk_bytes;
  Writer w(*stream, options);
  EXPECT_TRUE(w.write_session(s).ok());
  EXPECT_TRUE(stream->close().ok());
  return out;
}

struct Counted {
  size_t chunks = 0;
  uint64_t samples = 0;
  bool truncated = false;
  std::string problem;
};

// Reads a stream event by event, as the streaming tools do.
Counted count(const std::string& bytes) {
  Counted c;
  auto in = InputStream::from_memory(bytes);
  Reader reader(*in);
  for (;;) {
    auto ev = reader.next_event();
    if (!ev) {
      c.problem = ev.error().message;
      return c;
    }
    if (ev->kind == ReadEvent::Kind::chunk) {
      ++c.chunks;
      for (const auto& s : ev->chunk.entries.samples) c.samples += s.count;
    }
    if (ev->kind == ReadEvent::Kind::end_of_session && ev->truncated) {
      c.truncated = true;
      c.problem = reader.problem();
    }
    if (ev->kind == ReadEvent::Kind::end_of_stream) break;
  }
  if (!reader.problem().empty()) c.problem = reader.problem();
  return c;
}

// Offsets in an LZ4 frame where a block ends (what a killed writer leaves on disk): after the
// frame header, and after each data block.
std::vector<size_t> block_ends(const std::string& f) {
  std::vector<size_t> ends;
  const auto* p = reinterpret_cast<const unsigned char*>(f.data());
  const unsigned flg = p[4];
  size_t pos = 4 + 2 + ((flg & 0x08) ? 8 : 0) + ((flg & 0x01) ? 4 : 0) + 1;
  const size_t checksum = (flg & 0x10) ? 4 : 0;
  ends.push_back(pos);
  while (pos + 4 <= f.size()) {
    uint32_t word;
    std::memcpy(&word, p + pos, 4);
    if (word == 0) break;  // end mark
    pos += 4 + (word & 0x7fffffffu) + checksum;
    ends.push_back(pos);
  }
  return ends;
}

// What `lz4 -dc` recovers from a cut frame: every byte the decoder can give.
std::string lz4_decompress_all(const std::string& cut) {
  LZ4F_dctx* dctx = nullptr;
  EXPECT_FALSE(LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)));
  std::string out;
  std::vector<char> buf(4 << 20);
  size_t pos = 0;
  for (;;) {
    size_t dst = buf.size(), src = cut.size() - pos;
    size_t r = LZ4F_decompress(dctx, buf.data(), &dst, cut.data() + pos, &src, nullptr);
    EXPECT_FALSE(LZ4F_isError(r));
    pos += src;
    out.append(buf.data(), dst);
    if (LZ4F_isError(r) || r == 0 || (src == 0 && dst == 0)) break;
  }
  LZ4F_freeDecompressionContext(dctx);
  return out;
}

TEST(ArchiveTrust, KilledRecordingCutAtEveryLz4BlockKeepsEveryChunkOfThePlainPrefix) {
  const std::string packed = write(recording(30, 3000), true);
  const auto ends = block_ends(packed);
  ASSERT_GT(ends.size(), 8u) << "the recording must span many LZ4 blocks";
  size_t cuts_with_chunks = 0;
  for (size_t end : ends) {
    const std::string cut = packed.substr(0, end);
    const Counted plain = count(lz4_decompress_all(cut));
    const Counted read = count(cut);
    EXPECT_EQ(read.chunks, plain.chunks) << "cut after byte " << end;
    EXPECT_EQ(read.samples, plain.samples) << "cut after byte " << end;
    if (plain.chunks > 1) ++cuts_with_chunks;
  }
  EXPECT_GT(cuts_with_chunks, 3u);
}

TEST(ArchiveTrust, BareLz4MagicAfterACompleteSessionIsTrailingGarbage) {
  const std::string whole = write(recording(2, 10), true);
  ASSERT_FALSE(count(whole).truncated);
  ASSERT_TRUE(count(whole).problem.empty());
  const Counted c = count(whole + std::string("\x04\x22\x4d\x18", 4));
  EXPECT_EQ(c.chunks, count(whole).chunks);
  EXPECT_NE(c.problem.find("trailing garbage"), std::string::npos) << c.problem;
  auto in = InputStream::from_memory(whole + std::string("\x04\x22\x4d\x18", 4));
  auto a = gp::archive::read_archive(*in);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->truncated);
}

// Splits a plain stream into its messages (capnp stream framing).
std::vector<std::string> messages(const std::string& bytes) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos + 8 <= bytes.size()) {
    uint32_t n, first;
    std::memcpy(&n, bytes.data() + pos, 4);
    std::memcpy(&first, bytes.data() + pos + 4, 4);
    const size_t segments = n + 1;
    const size_t table = ((segments + 2) / 2) * 8;
    size_t words = first;
    for (size_t i = 1; i < segments; ++i) {
      uint32_t w;
      std::memcpy(&w, bytes.data() + pos + 4 + 4 * i, 4);
      words += w;
    }
    out.push_back(bytes.substr(pos, table + words * 8));
    pos += table + words * 8;
  }
  return out;
}

TEST(ArchiveTrust, HeaderAndTrailerWithoutTheirChunksIsNotComplete) {
  auto m = messages(write(recording(3, 400), false, 8192));
  ASSERT_GT(m.size(), 3u);
  const Counted c = count(m.front() + m.back());
  EXPECT_TRUE(c.truncated);
  EXPECT_NE(c.problem.find("does not match its trailer"), std::string::npos) << c.problem;
}

TEST(ArchiveTrust, EveryChunkTwiceIsNotComplete) {
  auto m = messages(write(recording(3, 400), false, 8192));
  ASSERT_GT(m.size(), 3u);
  std::string twice = m.front();
  for (size_t i = 1; i + 1 < m.size(); ++i) twice += m[i] + m[i];
  const Counted c = count(twice + m.back());
  EXPECT_TRUE(c.truncated);
  EXPECT_NE(c.problem.find("does not match its trailer"), std::string::npos) << c.problem;
  auto in = InputStream::from_memory(twice + m.back());
  auto a = gp::archive::read_archive(*in);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->truncated);
}

TEST(ArchiveTrust, AnHonestSessionMatchesItsTrailer) {
  for (bool compress : {false, true}) {
    const Counted c = count(write(recording(3, 400), compress));
    EXPECT_FALSE(c.truncated) << c.problem;
    EXPECT_TRUE(c.problem.empty()) << c.problem;
  }
}

std::string frame(capnp::MallocMessageBuilder& m) {
  auto bytes = capnp::messageToFlatArray(m);
  return std::string(reinterpret_cast<const char*>(bytes.asBytes().begin()),
                     bytes.asBytes().size());
}

// A valid session with one hostile chunk inserted before the trailer: the reader must keep the
// honest chunks, refuse the hostile one, and say the session was cut.
Counted with_hostile_chunk(const std::string& hostile) {
  auto m = messages(write(recording(1, 3), false));
  std::string bytes;
  for (size_t i = 0; i + 1 < m.size(); ++i) bytes += m[i];
  return count(bytes + hostile + m.back());
}

uint32_t pointer_index(const char* field) {
  return capnp::Schema::from<schema::Chunk>()
      .getFieldByName(field)
      .getProto()
      .getSlot()
      .getOffset();
}

TEST(ArchiveTrust, ZeroSizeListEntriesAreRefused) {
  constexpr uint32_t kEntries = 100000;  // within the entry limit: only their size is wrong
  for (const char* field : {"processes", "threads", "kernelSymbols", "jitMaps"}) {
    capnp::MallocMessageBuilder m;
    auto chunk = m.initRoot<schema::Message>().initChunk();
    // Padding that lets the message pass Cap'n Proto's traversal limit (a word per element).
    chunk.initStackCopies(1)[0].initStack(kEntries * 8);
    capnp::AnyStruct::Builder any = kj::mv(chunk);
    any.getPointerSection()[pointer_index(field)].initAs<capnp::List<capnp::Void>>(kEntries);
    const Counted c = with_hostile_chunk(frame(m));
    EXPECT_TRUE(c.truncated) << field;
    EXPECT_EQ(c.samples, 1u + 2 + 3) << field;
    EXPECT_NE(c.problem.find("smaller than any writer makes them"), std::string::npos) << c.problem;
  }
}

TEST(ArchiveTrust, ListLongerThanAnyWriterMakesIsRefused) {
  capnp::MallocMessageBuilder m;
  auto threads = m.initRoot<schema::Message>().initChunk().initThreads(
      gp::archive::ReaderLimits{}.max_list_entries + 1);
  for (auto t : threads) t.setTid(1);
  const Counted c = with_hostile_chunk(frame(m));
  EXPECT_TRUE(c.truncated);
  EXPECT_EQ(c.samples, 1u + 2 + 3);
  EXPECT_NE(c.problem.find("limit"), std::string::npos) << c.problem;
}

TEST(ArchiveTrust, StackOfAMillionFramesIsRefused) {
  capnp::MallocMessageBuilder m;
  auto chunk = m.initRoot<schema::Message>().initChunk();
  auto ids = chunk.initStacks(1)[0].initLocationIds(1000000);
  for (size_t i = 0; i < ids.size(); ++i) ids.set(i, 1);
  auto sample = chunk.initSamples(1)[0];
  sample.setStackId(4);  // the recording's three stacks, then this one
  sample.setCount(1);
  const Counted c = with_hostile_chunk(frame(m));
  EXPECT_TRUE(c.truncated);
  EXPECT_EQ(c.samples, 1u + 2 + 3);
  EXPECT_NE(c.problem.find("stack frame list"), std::string::npos) << c.problem;
}

TEST(ArchiveTrust, SampleCountsThatOverflowTheSessionTotalAreRefused) {
  capnp::MallocMessageBuilder m;
  auto samples = m.initRoot<schema::Message>().initChunk().initSamples(2);
  for (auto s : samples) {
    s.setStackId(1);
    s.setCount(UINT64_MAX / 2 + 1);  // the two together wrap to 0
  }
  const Counted c = with_hostile_chunk(frame(m));
  EXPECT_TRUE(c.truncated);
  EXPECT_EQ(c.samples, 1u + 2 + 3);
  EXPECT_NE(c.problem.find("overflow 64 bits"), std::string::npos) << c.problem;
}

TEST(ArchiveTrust, DeepestHonestStackIsKept) {
  capnp::MallocMessageBuilder m;
  auto chunk = m.initRoot<schema::Message>().initChunk();
  auto ids = chunk.initStacks(1)[0].initLocationIds(gp::archive::ReaderLimits{}.max_stack_frames);
  for (size_t i = 0; i < ids.size(); ++i) ids.set(i, 1);
  auto sample = chunk.initSamples(1)[0];
  sample.setStackId(4);
  sample.setCount(1);
  auto parts = messages(write(recording(1, 3), false));
  std::string bytes;
  for (size_t i = 0; i + 1 < parts.size(); ++i) bytes += parts[i];
  bytes += frame(m) + parts.back();
  const Counted c = count(bytes);
  EXPECT_EQ(c.samples, 1u + 2 + 3 + 1);
  EXPECT_EQ(c.chunks, 2u);
}

}  // namespace
}  // namespace gp::test::archive
