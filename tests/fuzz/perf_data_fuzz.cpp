// libFuzzer target for the perf.data reader: any bytes (a file, or a pipe-mode stream) must give
// either a one-line error or a session whose every reference names an existing entry, with as
// many samples as the reader counted — never a crash, a sanitizer report or an allocation sized
// by a declared count. The session is then written as an archive, which the writer must accept.
// Stack copies (--call-graph dwarf) are walked with one small table of every rule kind, given to
// the binaries whose recorded path has an odd length (the others have none).
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
#include "gp/import/perf_unwind_tables.h"
#include "gp/unwind/table.h"

namespace {

class FuzzTables final : public gp::import::PerfUnwindTables {
 public:
  FuzzTables() {
    using gp::unwind::Rule;
    gp::unwind::Table t;
    t.rows = {{0x1000, Rule::rsp, 8, 0},
              {0x1010, Rule::rbp, 16, -16},
              {0x1020, Rule::plt, 8, 0},
              {0x1030, Rule::signal, 0, 0},
              {0x1040, Rule::end, 0, 0},
              {0x1050, Rule::unsupported, 0, 0},
              {0x1060, Rule::deref_rsp, -8, -16, 8},
              {0x1070, Rule::deref_rbp, 16, 0, 0},
              {0x1080, Rule::reg, 8, 0, 0, 3},
              {0x3000, Rule::rsp, 4096, -8},
              {0x3100, Rule::none, 0, 0}};
    auto packed = gp::unwind::pack(t);
    if (!packed) std::abort();
    binary_.table = std::move(*packed);
    binary_.segments = {{0, 0, 0x4000}, {0x4000, 0x10000, 0x1000}};
    with_.binary = &binary_;
    with_.build_id = "fuzz";
    without_.why = "not found";
  }
  const gp::import::PerfBinaryTable& find(const gp::import::PerfBinaryQuery& q) override {
    return q.path.size() % 2 ? with_ : without_;
  }

 private:
  gp::unwind::LoadedBinary binary_;
  gp::import::PerfBinaryTable with_, without_;
};

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
  static FuzzTables tables;
  gp::import::PerfDataOptions opt;
  opt.unwind_tables = &tables;
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
