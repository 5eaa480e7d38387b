// libFuzzer target for the archive reader: any byte sequence must give sessions, a truncated
// prefix or an Error — never a crash, a sanitizer report or a dangling table reference. What was
// read is then written again (plain and LZ4) and must read back to the same tables, which also
// exercises the writer on every shape of session the reader can produce.
//
//   scripts/fuzz.sh                      (builds build-fuzz/ with clang and runs every target)
//   build-fuzz/bin/archive_fuzz tests/fuzz/corpus/archive

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "gp/archive/reader.h"
#include "gp/archive/writer.h"

namespace {

using gp::model::Archive;
using gp::model::Session;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "archive_fuzz: invariant violated: %s\n", what);
  std::abort();
}

// The reader promises that every reference it hands out names an existing entry.
void check_references(const Session& s) {
  for (const auto& loc : s.locations) {
    if (loc.mapping_id > s.mappings.size()) fail("location -> mapping");
    for (const auto& line : loc.lines)
      if (line.function_id == 0 || line.function_id > s.functions.size()) fail("line -> function");
  }
  for (const auto& st : s.stacks)
    for (uint64_t id : st.location_ids)
      if (id == 0 || id > s.locations.size()) fail("stack -> location");
  for (const auto& sm : s.samples)
    if (sm.stack_id == 0 || sm.stack_id > s.stacks.size()) fail("sample -> stack");
  for (const auto& c : s.stack_copies)
    if (c.kernel_stack_id > s.stacks.size()) fail("stack copy -> stack");
}

// Table sizes and sample totals: what a re-write must preserve.
struct Shape {
  std::vector<size_t> sizes;
  std::vector<uint64_t> totals;
  std::vector<bool> truncated;
  bool operator==(const Shape&) const = default;
};

Shape shape_of(const Archive& a) {
  Shape out;
  for (const auto& s : a.sessions) {
    out.sizes.insert(out.sizes.end(), {s.processes.size(), s.threads.size(), s.mappings.size(),
                                       s.functions.size(), s.locations.size(), s.stacks.size(),
                                       s.samples.size(), s.kernel_symbols.size(), s.jit_maps.size(),
                                       s.stack_copies.size(), s.counters.size()});
    out.totals.push_back(s.total_samples());
    out.truncated.push_back(s.truncated);
  }
  return out;
}

// "sizes... total truncated" per session, for the report when a round trip differs.
std::string describe(const Shape& shape) {
  std::string out;
  const size_t per = shape.totals.empty() ? 0 : shape.sizes.size() / shape.totals.size();
  for (size_t i = 0; i < shape.totals.size(); ++i) {
    out += "[";
    for (size_t k = 0; k < per; ++k) out += std::to_string(shape.sizes[i * per + k]) + " ";
    out += "samples=" + std::to_string(shape.totals[i]) + (shape.truncated[i] ? " cut]" : "]");
  }
  return out;
}

void round_trip(const Archive& original, bool compress) {
  Archive copy = original;  // the writer consumes samples
  std::string bytes;
  {
    auto out = gp::archive::OutputStream::to_string(&bytes, compress);
    if (!gp::archive::write_archive(*out, copy).ok()) fail("re-writing a read archive failed");
    if (!out->close().ok()) fail("closing the re-written archive failed");
  }
  auto in = gp::archive::InputStream::from_memory(bytes, "rewritten");
  auto again = gp::archive::read_archive(*in);
  if (!again.ok()) fail("re-written archive does not read back");
  Shape before = shape_of(original), after = shape_of(*again);
  if (!(before == after)) {
    std::fprintf(stderr, "archive_fuzz: read %s | re-read %s (%s)\n", describe(before).c_str(),
                 describe(after).c_str(), compress ? "lz4" : "plain");
    fail("re-written archive reads back different");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)gp::archive::looks_like_archive(bytes);
  auto in = gp::archive::InputStream::from_memory(bytes, "fuzz");
  auto archive = gp::archive::read_archive(*in);
  if (!archive.ok()) {
    if (archive.error().message.empty()) fail("error without a message");
    return 0;
  }
  if (archive->sessions.empty()) fail("success without a session");
  if (archive->truncated && archive->problem.empty()) fail("truncated without a problem text");
  for (const auto& s : archive->sessions) check_references(s);
  round_trip(*archive, false);
  round_trip(*archive, true);
  return 0;
}
