// libFuzzer target for the collapsed-stack reader (`.col` with its JSON header, and plain folded
// text; gp/ingest/collapsed.h): any bytes give a session whose every reference names an existing
// entry, or an Error with a message, never a crash; the session is then written as an archive.
//
//   scripts/fuzz.sh collapsed_fuzz

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gp/archive/writer.h"
#include "gp/ingest/collapsed.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "collapsed_fuzz: invariant violated: %s\n", what);
  std::abort();
}

void check_references(const gp::model::Session& s) {
  for (const auto& l : s.locations)
    for (const auto& line : l.lines)
      if (line.function_id == 0 || line.function_id > s.functions.size()) fail("line -> function");
  for (const auto& st : s.stacks)
    for (uint64_t id : st.location_ids)
      if (id == 0 || id > s.locations.size()) fail("stack -> location");
  for (const auto& smp : s.samples)
    if (smp.stack_id == 0 || smp.stack_id > s.stacks.size()) fail("sample -> stack");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto archive = gp::ingest::parse_collapsed(text, "fuzz.col");
  if (!archive.ok()) {
    if (archive.error().message.empty()) fail("error without a message");
    return 0;
  }
  if (archive->truncated && archive->problem.empty()) fail("skipped lines without a problem text");
  for (const auto& s : archive->sessions) check_references(s);
  std::string bytes;
  auto out = gp::archive::OutputStream::to_string(&bytes, false);
  if (!gp::archive::write_archive(*out, *archive).ok()) fail("writing the parsed session failed");
  return 0;
}
