// Regression tests for archive reader bugs found by tests/fuzz/archive_fuzz.cpp. Each test
// builds the smallest message stream that showed the bug, with capnp directly (the gp writer
// cannot produce these inputs).

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>

#include <string>

#include "archive.capnp.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"

namespace gp::test::compat {
namespace {

// Text with an embedded NUL (capnp allows the bytes; gp's writer cannot write them).
capnp::Text::Reader text(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }

std::string frame(capnp::MallocMessageBuilder& m) {
  auto bytes = capnp::messageToFlatArray(m);
  return std::string(reinterpret_cast<const char*>(bytes.asBytes().begin()),
                     bytes.asBytes().size());
}

std::string header_with_nul() {
  capnp::MallocMessageBuilder m;
  auto h = m.initRoot<schema::Message>().initHeader();
  h.setMagic(schema::ARCHIVE_MAGIC);
  h.setFormatMajor(schema::FORMAT_MAJOR);
  h.initHost().setHostname(text(std::string("host\0junk", 9)));
  return frame(m);
}

std::string chunk_with_nul_counters() {
  capnp::MallocMessageBuilder m;
  auto counters = m.initRoot<schema::Message>().initChunk().initCounters(2);
  counters[0].setName(text(std::string("a\0x", 3)));
  counters[0].setValue(1);
  counters[1].setName(text(std::string("a\0y", 3)));
  counters[1].setValue(2);
  return frame(m);
}

std::string clean_trailer() {
  capnp::MallocMessageBuilder m;
  m.initRoot<schema::Message>().initTrailer().setCleanClose(true);
  return frame(m);
}

Result<model::Archive> read(const std::string& bytes) {
  auto in = archive::InputStream::from_memory(bytes);
  return archive::read_archive(*in);
}

// Found by archive_fuzz: Text was read past its first NUL, but written back as a C string, so
// two counters "a\0x" and "a\0y" read as two and came back from a re-write as one.
TEST(ArchiveFuzzRegress, TextEndsAtItsFirstNulSoRewritesReadTheSame) {
  auto a = read(header_with_nul() + chunk_with_nul_counters() + clean_trailer());
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->sessions.size(), 1u);
  const auto& s = a->sessions[0];
  EXPECT_EQ(s.header.host.hostname, "host");
  ASSERT_EQ(s.counters.size(), 1u);
  EXPECT_EQ(s.counters[0].name, "a");
  EXPECT_EQ(s.counters[0].value, 2);

  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, false);
  model::Archive copy = *a;
  ASSERT_TRUE(archive::write_archive(*out, copy).ok());
  ASSERT_TRUE(out->close().ok());
  auto again = read(bytes);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->sessions[0].header.host.hostname, "host");
  ASSERT_EQ(again->sessions[0].counters.size(), 1u);
  EXPECT_EQ(again->sessions[0].counters[0].value, 2);
}

}  // namespace
}  // namespace gp::test::compat
