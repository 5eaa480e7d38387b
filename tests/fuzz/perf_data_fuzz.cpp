// libFuzzer target for the perf.data reader: any bytes (a file, or a pipe-mode stream) must give
// either a one-line error or a session whose every reference names an existing entry, with as
// many samples as the reader counted — never a crash, a sanitizer report or an allocation sized
// by a declared count. The session is then written as an archive, which the writer must accept.
//
//   scripts/fuzz.sh perf_data_fuzz
//   build-fuzz/bin/perf_data_fuzz tests/fuzz/corpus/perf_data

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "gp/archive/writer.h"
#include "gp/import/perf_data.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "perf_data_fuzz: invariant violated: %s\n", what);
  std::abort();
}

void check_references(const gp::model::Session& s) {
  for (const auto& l : s.locations)
    if (l.mapping_id > s.mappings.size()) fail("location -> mapping");
  for (const auto& st : s.stacks)
    for (uint64_t id : st.location_ids)
      if (id == 0 || id > s.locations.size()) fail("stack -> location");
  for (const auto& smp : s.samples)
    if (smp.stack_id == 0 || smp.stack_id > s.stacks.size()) fail("sample -> stack");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gp::model::Session s;
  gp::import::PerfDataOptions opt;
  gp::import::PerfDataImporter imp(s, opt);
  std::string error;
  if (!imp.import(std::span<const uint8_t>(data, size), error)) {
    if (error.empty() || error.find('\n') != std::string::npos) fail("error message");
    return 0;
  }
  if (s.total_samples() != imp.stats().samples) fail("sample count");
  check_references(s);
  std::string bytes;
  auto out = gp::archive::OutputStream::to_string(&bytes, false);
  gp::archive::Writer w(*out);
  if (!w.write_session(s)) fail("writer refused an imported session");
  return 0;
}
