// libFuzzer target for the unwind-table builder (libcore/src/unwind). An input that starts with
// the ELF magic is an ELF image (libelf, then the CFI parser); any other input is one raw CFI
// section: its first byte says which (bit 0: .debug_frame, else .eh_frame) and whether FDEs are
// limited to a text range (bit 1), the rest is the section's bytes. Whatever the bytes, the
// builder must return an error or a table that keeps its contract (sorted rows, no equal
// neighbours, a final `none` row), and pack() must give pages whose rows are in range — never a
// crash, a hang or a sanitizer report.
//
//   scripts/fuzz.sh unwind_table_fuzz
//   build-fuzz/bin/unwind_table_fuzz tests/fuzz/corpus/unwind_table

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "gp/unwind/table.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "unwind_table_fuzz: invariant violated: %s\n", what);
  std::abort();
}

bool has_offsets(gp::unwind::Rule r) {
  return r == gp::unwind::Rule::rsp || r == gp::unwind::Rule::rbp || r == gp::unwind::Rule::plt ||
         r == gp::unwind::Rule::deref_rsp || r == gp::unwind::Rule::deref_rbp ||
         r == gp::unwind::Rule::reg;
}

void check(const gp::unwind::Table& t) {
  const auto& rows = t.rows;
  if (!rows.empty() && rows.back().rule != gp::unwind::Rule::none) fail("last row is not none");
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!gp::unwind::packed_kind_known(static_cast<uint8_t>(rows[i].rule))) fail("unknown rule");
    if (!has_offsets(rows[i].rule) && (rows[i].cfa_offset || rows[i].rbp_offset || rows[i].cfa_add))
      fail("offsets");
    if (i == 0) continue;
    if (rows[i - 1].address >= rows[i].address) fail("rows not strictly increasing");
    if (rows[i - 1].rule == rows[i].rule && rows[i - 1].cfa_offset == rows[i].cfa_offset &&
        rows[i - 1].rbp_offset == rows[i].rbp_offset && rows[i - 1].cfa_add == rows[i].cfa_add &&
        rows[i - 1].cfa_register == rows[i].cfa_register) {
      fail("equal neighbours");
    }
  }
  if (t.stats.rows_raw < rows.size()) fail("rows_raw below rows");
  auto packed = gp::unwind::pack(t);
  if (!packed.ok()) return;  // wider than 4 GiB
  const auto& p = *packed;
  if (!rows.empty() && (p.rows.empty() || p.rows[0].pc != 0)) fail("packed rows[0].pc != 0");
  for (const auto& r : p.rows)
    if (r.rule >= p.rules.size()) fail("row names no rule");
  for (size_t i = 0; i < p.pages.size(); ++i) {
    const auto& pg = p.pages[i];
    if (pg.count == 0 || uint64_t{pg.first_row} + pg.count > p.rows.size()) fail("page range");
    // The rows after the page's first start in it, increasing.
    for (uint32_t k = pg.first_row + 2; k < pg.first_row + pg.count; ++k)
      if (p.rows[k - 1].pc >= p.rows[k].pc) fail("packed rows not increasing in a page");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 4 && std::memcmp(data,
                               "\x7f"
                               "ELF",
                               4) == 0) {
    auto t = gp::unwind::build_table(std::span<const uint8_t>(data, size));
    if (t.ok()) check(*t);
    return 0;
  }
  if (size == 0) return 0;
  gp::unwind::CfiInput in;
  const gp::unwind::CfiSection section{std::span<const uint8_t>(data + 1, size - 1), 0x400000};
  (data[0] & 1 ? in.debug_frame : in.eh_frame) = section;
  if (data[0] & 2) in.text_ranges = {{0x1000, 0x800000}};
  in.data_base = 0x600000;
  in.text_base = 0x401000;
  auto t = gp::unwind::build_table_from_sections(in);
  if (t.ok()) check(*t);
  return 0;
}
