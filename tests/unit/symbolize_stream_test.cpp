// StreamSymbolizer against symbolize_session: a session of user, kernel, JIT and unmapped frames
// written in many small chunks (kallsyms and perf maps at the end, as gp-record writes them),
// streamed chunk by chunk, must read back with the names, statuses, kinds and counters the
// whole-session path gives; a second pass changes no byte; jobs do not change the output.
#include <gtest/gtest.h>

#include "gp/archive/byte_io.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/symbolize/stream_symbolizer.h"
#include "gp/symbolize/symbolizer.h"
#include "symbolize_fixture_test.h"

namespace gp::test::symbolize {
namespace {

using gp::archive::ReadEvent;
using gp::symbolize::StreamSymbolizer;
using gp::symbolize::SymbolizeOptions;
using model::FrameKind;
using model::SymbolStatus;

constexpr size_t kSmallChunks = 1024;

std::string encode(model::Session s, size_t chunk_bytes) {
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, false);
  archive::WriterOptions opt;
  opt.chunk_bytes = chunk_bytes;
  archive::Writer w(*out, opt);
  EXPECT_TRUE(w.write_session(s));
  EXPECT_TRUE(out->close());
  return bytes;
}

model::Session decode(const std::string& bytes) {
  auto in = archive::InputStream::from_memory(bytes);
  auto a = archive::read_archive(*in);
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a->sessions.size(), 1u);
  return a.ok() && !a->sessions.empty() ? std::move(a->sessions[0]) : model::Session{};
}

// What gp-symbolize does: stream every event through a StreamSymbolizer into a Writer.
std::string stream(const std::string& bytes, const SymbolizeOptions& options,
                   size_t chunk_bytes = kSmallChunks) {
  std::string out;
  auto os = archive::OutputStream::to_string(&out, false);
  archive::WriterOptions opt;
  opt.chunk_bytes = chunk_bytes;
  archive::Writer w(*os, opt);
  auto in = archive::InputStream::from_memory(bytes);
  archive::Reader reader(*in);
  StreamSymbolizer sym(options);
  for (;;) {
    auto ev = reader.next_event();
    EXPECT_TRUE(ev.ok());
    if (!ev.ok() || ev->kind == ReadEvent::Kind::end_of_stream) break;
    if (ev->kind == ReadEvent::Kind::header) {
      model::Session head;
      head.header = ev->header;
      sym.begin_session(head.header);
      EXPECT_TRUE(w.begin_session(head));
    } else if (ev->kind == ReadEvent::Kind::chunk) {
      sym.symbolize_chunk(ev->chunk);
      EXPECT_TRUE(w.write_delta(ev->chunk));
    } else {
      EXPECT_TRUE(sym.end_session([&](archive::ChunkDelta& d) { return w.write_delta(d); }));
      model::Trailer t = ev->trailer.value_or(model::Trailer{});
      t.counters = sym.counters();
      EXPECT_TRUE(w.end_deltas(t, !ev->truncated));
    }
  }
  EXPECT_TRUE(os->close());
  return out;
}

// User frames of several fixtures (with inlines and lines), kernel, JIT and unmapped frames,
// and many samples; kallsyms and the perf map are added last, so they land in the last chunk.
model::Session mixed_session() {
  model::Session s;
  model::SessionBuilder b(s);
  int32_t pid = 100;
  std::vector<uint64_t> frames;
  for (const char* name : {"sym_fp", "sym_inline", "sym_cpptempl", "libsym_shared.so"}) {
    std::string bin = fixture(name);
    Loaded l = load(b, bin, 0x55d0c0de0000 + (static_cast<uint64_t>(pid) << 32), pid);
    for (const char* fn :
         {"main", "fp_leaf", "fp_outer", "inl_outer", "_ZN2ns5StackIiE4pushERKi", "shared_work"}) {
      Symbol sym = symbol(bin, fn);
      if (sym.address == 0) continue;
      for (uint64_t off = 0; off < std::min<uint64_t>(sym.size, 64); off += 4)
        frames.push_back(add_location(b, l, sym.address + off, off != 0));
    }
    ++pid;
  }
  model::Mapping k;
  k.kind = model::MappingKind::kernel;
  k.start = 0xffffffff81000000;
  k.end = 0xffffffff82000000;
  k.path = "[kernel.kallsyms]";
  uint64_t km = b.mapping(k);
  frames.push_back(b.address_location(km, 0xffffffff81100042, FrameKind::kernel, true));
  frames.push_back(b.address_location(0, 0xffffffffc0001010, FrameKind::kernel, true));
  frames.push_back(b.address_location(0, 0xffffffff80000000, FrameKind::kernel, true));
  model::Mapping jm;
  jm.pid = 42;
  jm.kind = model::MappingKind::anonymous;
  jm.start = 0x7000;
  jm.end = 0x8000;
  uint64_t jid = b.mapping(jm);
  frames.push_back(b.address_location(jid, 0x7010, FrameKind::unknown, false));
  frames.push_back(b.address_location(jid, 0x7400, FrameKind::unknown, true));
  frames.push_back(b.address_location(0, 0x1234, FrameKind::unknown, false));
  for (size_t i = 0; i + 3 < frames.size(); ++i)
    b.add_sample(100, 100, b.stack({frames[i], frames[i + 1], frames[i + 3]}), i + 1);
  s.set_counter("samples.lost", 3);
  s.kernel_symbols = {{0xffffffff81000000, "_stext", "", 'T'},
                      {0xffffffff81100000, "do_syscall_64", "", 'T'},
                      {0xffffffffc0001000, "xfs_file_read_iter", "xfs", 't'}};
  s.jit_maps = {{42, "/tmp/perf-42.map", {{0x7000, 0x100, "LazyCompile:*fib app.js:1"}}}};
  return s;
}

void expect_same_names(const model::Session& want, const model::Session& got) {
  ASSERT_EQ(got.locations.size(), want.locations.size());
  for (uint64_t id = 1; id <= want.locations.size(); ++id) {
    EXPECT_EQ(names(got, id), names(want, id)) << "location " << id;
    EXPECT_EQ(got.location(id).status, want.location(id).status) << "location " << id;
    EXPECT_EQ(got.location(id).kind, want.location(id).kind) << "location " << id;
    const auto& a = got.location(id).lines;
    const auto& b = want.location(id).lines;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      EXPECT_EQ(a[i].line, b[i].line);
      EXPECT_EQ(a[i].inlined, b[i].inlined);
      EXPECT_EQ(got.function(a[i].function_id).file_name,
                want.function(b[i].function_id).file_name);
    }
  }
  EXPECT_EQ(got.stacks.size(), want.stacks.size());
  EXPECT_EQ(got.total_samples(), want.total_samples());
  ASSERT_EQ(got.counters.size(), want.counters.size());
  for (size_t i = 0; i < want.counters.size(); ++i) {
    EXPECT_EQ(got.counters[i].name, want.counters[i].name);
    EXPECT_EQ(got.counters[i].value, want.counters[i].value) << want.counters[i].name;
  }
  EXPECT_TRUE(got.header.symbolized);
}

TEST(StreamSymbolizer, NamesEveryFrameAsTheWholeSessionPathDoes) {
  SymbolizeOptions o;
  o.resolver.lines = true;
  std::string input = encode(mixed_session(), kSmallChunks);
  model::Session whole = decode(input);
  ASSERT_GT(whole.trailer->chunk_count, 10u) << "the session should arrive in many chunks";
  gp::symbolize::symbolize_session(whole, o);
  model::Session streamed = decode(stream(input, o));
  expect_same_names(whole, streamed);
  EXPECT_EQ(streamed.counter("symbolize.resolved"), whole.counter("symbolize.resolved"));
  EXPECT_GT(streamed.counter("symbolize.no-symbol"), 0);
  EXPECT_EQ(names(streamed, streamed.locations.size() - 2),
            std::vector<std::string>{"LazyCompile:*fib app.js:1"});
}

TEST(StreamSymbolizer, SecondPassChangesNoByteAndJobsDoNotMatter) {
  SymbolizeOptions one, four;
  four.jobs = 4;
  std::string input = encode(mixed_session(), kSmallChunks);
  std::string once = stream(input, one);
  EXPECT_EQ(stream(input, four), once);
  EXPECT_EQ(stream(once, one), once) << "re-running changed a symbolized archive";
}

TEST(StreamSymbolizer, AnUpdateThatLeavesAFrameUnresolvedIsLookedUpAgain) {
  // A recorder that writes a user frame, then an update marking it unresolved: the update is
  // what the reader keeps, so the frame must still be named.
  model::Session s;
  model::SessionBuilder b(s);
  Loaded l = load(b, fixture("sym_fp"), 0x55d0c0de0000, 100);
  uint64_t leaf = add_location(b, l, symbol(fixture("sym_fp"), "fp_leaf").address + 4, false);
  b.add_sample(100, 100, b.stack({leaf}), 1);
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, false);
  archive::Writer w(*out);
  ASSERT_TRUE(w.begin_session(s));
  ASSERT_TRUE(w.write_chunk(s));
  s.location_updates.push_back({leaf, {}, SymbolStatus::no_symbol, FrameKind::native});
  ASSERT_TRUE(w.end_session(s));
  ASSERT_TRUE(out->close());
  model::Session named = decode(stream(bytes, SymbolizeOptions{}));
  EXPECT_EQ(names(named, leaf), std::vector<std::string>{"fp_leaf"});
  EXPECT_EQ(named.location(leaf).status, SymbolStatus::resolved);
}

TEST(StreamSymbolizer, ACutSessionIsNamedAsFarAsItGoesAndStaysCut) {
  std::string input = encode(mixed_session(), kSmallChunks);
  std::string cut = input.substr(0, input.size() / 2);
  model::Session named = decode(stream(cut, SymbolizeOptions{}));
  EXPECT_GT(named.locations.size(), 0u);
  ASSERT_TRUE(named.trailer.has_value());
  EXPECT_FALSE(named.trailer->clean_close);
  EXPECT_TRUE(named.truncated);
  EXPECT_EQ(named.location(1).status, SymbolStatus::resolved);
}

}  // namespace
}  // namespace gp::test::symbolize
