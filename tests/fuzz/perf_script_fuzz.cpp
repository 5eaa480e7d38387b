// libFuzzer target for the perf script importer: any bytes, split at an arbitrary point (a line
// may straddle two reads), must give a session whose every reference names an existing entry —
// never a crash or a sanitizer report. The session is then written as an archive, which the
// writer must accept.
//
//   scripts/fuzz.sh
//   build-fuzz/bin/perf_script_fuzz tests/fuzz/corpus/perf_script

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gp/archive/writer.h"
#include "gp/import/perf_script.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "perf_script_fuzz: invariant violated: %s\n", what);
  std::abort();
}

void check_references(const gp::model::Session& s) {
  for (const auto& l : s.locations) {
    if (l.mapping_id > s.mappings.size()) fail("location -> mapping");
    for (const auto& line : l.lines)
      if (line.function_id == 0 || line.function_id > s.functions.size()) fail("line -> function");
  }
  for (const auto& st : s.stacks)
    for (uint64_t id : st.location_ids)
      if (id == 0 || id > s.locations.size()) fail("stack -> location");
  uint64_t total = 0;
  for (const auto& smp : s.samples) {
    if (smp.stack_id == 0 || smp.stack_id > s.stacks.size()) fail("sample -> stack");
    total += smp.count;
  }
  (void)total;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gp::model::Session s;
  gp::import::PerfScriptOptions opt;
  opt.max_line_bytes = 4096;  // reach the over-long line path with small inputs
  gp::import::PerfScriptParser parser(s, opt);
  size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  parser.feed(text.substr(0, cut));
  parser.feed(text.substr(cut));
  parser.finish();
  if (s.total_samples() != parser.stats().samples) fail("sample count");
  check_references(s);
  std::string bytes;
  auto out = gp::archive::OutputStream::to_string(&bytes, false);
  gp::archive::Writer w(*out);
  if (!w.write_session(s)) fail("writer refused an imported session");
  return 0;
}
