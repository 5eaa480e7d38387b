// The CFI parser on hand-built sections: each instruction and encoding gives the rows the DWARF
// and LSB specifications say, and corrupt input (truncations, bad lengths, CIE pointers to
// nowhere or to FDEs, absurd advances, unknown opcodes, stack underflows, random damage) gives
// an error, skipped FDEs or unsupported rows, never a crash or rows out of order.

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "unwind_support.h"

namespace gp::test::unwind {
namespace {

using Bytes = std::vector<uint8_t>;
using gp::unwind::build_table_from_sections;
using gp::unwind::CfiInput;

// CFA = rsp + 8, return address at CFA - 8: GCC's x86-64 CIE program.
const Bytes kCieInsns = {0x0c, 0x07, 0x08, 0x90, 0x01};
// push rbp; mov rbp, rsp; ...; leave — as GCC describes it.
const Bytes kRbpFrame = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x4a, 0x0c, 0x07, 0x08};

void put32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void patch32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// Writes .eh_frame (or .debug_frame) entries.
struct CfiWriter {
  bool eh = true;
  Bytes out;

  size_t cie(const std::string& aug = "zR", const Bytes& aug_data = {0x03},
             const Bytes& insns = kCieInsns, uint8_t version = 1, int8_t data_align = 0x78) {
    const size_t at = out.size();
    put32(out, 0);
    put32(out, eh ? 0 : 0xffffffffu);
    out.push_back(version);
    out.insert(out.end(), aug.begin(), aug.end());
    out.push_back(0);
    out.push_back(1);                                 // code alignment factor
    out.push_back(static_cast<uint8_t>(data_align));  // sleb: 0x78 is -8
    out.push_back(16);                                // return address column
    if (!aug.empty() && aug[0] == 'z') {
      out.push_back(static_cast<uint8_t>(aug_data.size()));
      out.insert(out.end(), aug_data.begin(), aug_data.end());
    }
    out.insert(out.end(), insns.begin(), insns.end());
    patch32(out, at, static_cast<uint32_t>(out.size() - at - 4));
    return at;
  }

  // An FDE with udata4 addresses (the CIE's 'R' is 0x03) or, in .debug_frame, 8-byte ones.
  size_t fde(size_t cie_at, uint64_t start, uint64_t len, const Bytes& insns, bool z = true) {
    const size_t at = out.size();
    put32(out, 0);
    const size_t id_at = out.size();
    put32(out, eh ? static_cast<uint32_t>(id_at - cie_at) : static_cast<uint32_t>(cie_at));
    if (eh) {
      put32(out, static_cast<uint32_t>(start));
      put32(out, static_cast<uint32_t>(len));
      if (z) out.push_back(0);
    } else {
      put64(out, start);
      put64(out, len);
    }
    out.insert(out.end(), insns.begin(), insns.end());
    patch32(out, at, static_cast<uint32_t>(out.size() - at - 4));
    return at;
  }
};

gp::Result<Table> compile(const Bytes& section, bool eh = true, uint64_t address = 0x5000) {
  CfiInput in;
  (eh ? in.eh_frame : in.debug_frame) = gp::unwind::CfiSection{section, address};
  return build_table_from_sections(in);
}

std::string rows_text(const Table& t) {
  std::string s;
  for (const Row& r : t.rows) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%llx ", static_cast<unsigned long long>(r.address));
    s += addr + describe(r) + "\n";
  }
  return s;
}

// The rows of one FDE at 0x1000..0x1020 whose program is `insns`.
std::string rows_of(const Bytes& insns, const Bytes& cie_insns = kCieInsns,
                    const std::string& aug = "zR", const Bytes& aug_data = {0x03}) {
  CfiWriter w;
  const size_t c = w.cie(aug, aug_data, cie_insns);
  w.fde(c, 0x1000, 0x20, insns);
  auto t = compile(w.out);
  if (!t.ok()) return "error: " + t.error().message;
  expect_invariants(*t);
  return rows_text(*t);
}

TEST(UnwindCfi, RbpFrameRows) {
  EXPECT_EQ(rows_of(kRbpFrame),
            "1000 rsp+8\n1001 rsp+16 rbp@cfa-16\n1004 rbp+16 rbp@cfa-16\n100e rsp+8 rbp@cfa-16\n"
            "1020 none\n");
}

TEST(UnwindCfi, RememberAndRestoreState) {
  // sub rsp; remember; epilogue (rsp+8); ret; restore: rsp+32 again.
  EXPECT_EQ(rows_of({0x44, 0x0e, 0x20, 0x0a, 0x45, 0x0e, 0x08, 0x41, 0x0b, 0x41, 0x0e, 0x10}),
            "1000 rsp+8\n1004 rsp+32\n1009 rsp+8\n100a rsp+32\n100b rsp+16\n1020 none\n");
}

TEST(UnwindCfi, RestoreReturnsToTheCiesRule) {
  // rbp saved, then restored (DW_CFA_restore rbp and restore_extended), then same_value.
  EXPECT_EQ(rows_of({0x86, 0x02, 0x41, 0xc6, 0x41, 0x86, 0x03, 0x41, 0x06, 0x06}),
            "1000 rsp+8 rbp@cfa-16\n1001 rsp+8\n1002 rsp+8 rbp@cfa-24\n1003 rsp+8\n1020 none\n");
  EXPECT_EQ(rows_of({0x86, 0x02, 0x41, 0x08, 0x06}),
            "1000 rsp+8 rbp@cfa-16\n1001 rsp+8\n1020 none\n");
}

TEST(UnwindCfi, ExtendedAndSignedForms) {
  // offset_extended_sf rbp -2 (× -8: CFA+16); def_cfa_sf rsp -2 (rsp+16);
  // def_cfa_offset_sf -4 (→ +32); GNU_args_size ignored; advance_loc1/2/4.
  EXPECT_EQ(rows_of({0x11, 0x06, 0x7e, 0x02, 0x01, 0x12, 0x07, 0x7e, 0x03, 0x01, 0x00, 0x2e,
                     0x10, 0x13, 0x7c, 0x04, 0x01, 0x00, 0x00, 0x00, 0x05, 0x06, 0x03}),
            "1000 rsp+8 rbp@cfa16\n1001 rsp+16 rbp@cfa16\n1002 rsp+32 rbp@cfa16\n"
            "1003 rsp+32 rbp@cfa-24\n1020 none\n");
}

TEST(UnwindCfi, ReturnAddressUndefinedIsEnd) {
  EXPECT_EQ(rows_of({0x07, 0x10}), "1000 end\n1020 none\n");
  EXPECT_EQ(rows_of({0x41, 0x07, 0x10}), "1000 rsp+8\n1001 end\n1020 none\n");
}

TEST(UnwindCfi, CfaFromAStackSlotOrAnotherRegister) {
  // CFA = *(rsp + 8) + 8 and *(rbp - 8) (OpenSSL's realigned frames), CFA = rbx + 16 (ld.so's
  // lazy binder).
  EXPECT_EQ(rows_of({0x0f, 0x05, 0x77, 0x08, 0x06, 0x23, 0x08}),
            "1000 deref-rsp[8]+8\n1020 none\n");
  EXPECT_EQ(rows_of({0x0f, 0x03, 0x76, 0x78, 0x06}), "1000 deref-rbp[-8]+0\n1020 none\n");
  EXPECT_EQ(rows_of({0x0c, 0x03, 0x10}), "1000 reg r3+16\n1020 none\n");
  // A deref of another register, or more after the deref: not this form.
  EXPECT_EQ(rows_of({0x0f, 0x03, 0x73, 0x08, 0x06}), "1000 unsupported\n1020 none\n");
  EXPECT_EQ(rows_of({0x0f, 0x05, 0x77, 0x08, 0x06, 0x06, 0x23}), "1000 unsupported\n1020 none\n");
  // A def_cfa_offset after the expression leaves no register to add it to.
  EXPECT_EQ(rows_of({0x0f, 0x03, 0x77, 0x08, 0x06, 0x0e, 0x10}), "1000 unsupported\n1020 none\n");
}

TEST(UnwindCfi, RulesGpCannotFollowAreUnsupported) {
  EXPECT_EQ(rows_of({0x90, 0x02}), "1000 unsupported\n1020 none\n");        // RA at CFA-16
  EXPECT_EQ(rows_of({0x09, 0x10, 0x00}), "1000 unsupported\n1020 none\n");  // RA in rax
  EXPECT_EQ(rows_of({0x09, 0x06, 0x03}), "1000 unsupported\n1020 none\n");  // rbp in rbx
  EXPECT_EQ(rows_of({0x10, 0x06, 0x02, 0x77, 0x10}), "1000 unsupported\n1020 none\n");  // rbp expr
  EXPECT_EQ(rows_of({0x14, 0x06, 0x02}), "1000 unsupported\n1020 none\n");  // val_offset rbp
  EXPECT_EQ(rows_of({0x86, 0x00}), "1000 unsupported\n1020 none\n");        // rbp at CFA+0
  // CFA = *(rsp + 8 + r9 * 8) + 8 (OpenSSL's bn_mul_mont): an expression gp does not evaluate.
  EXPECT_EQ(rows_of({0x0f, 0x0a, 0x77, 0x08, 0x79, 0x00, 0x38, 0x1e, 0x22, 0x06, 0x23, 0x08}),
            "1000 unsupported\n1020 none\n");
  // Other registers' rules do not matter to the walker.
  EXPECT_EQ(rows_of({0x83, 0x02, 0x10, 0x03, 0x02, 0x77, 0x10, 0x09, 0x0c, 0x00}),
            "1000 rsp+8\n1020 none\n");
}

TEST(UnwindCfi, PltExpressionIsPlt) {
  const Bytes plt = {0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
  EXPECT_EQ(rows_of(plt), "1000 plt+8\n1020 none\n");
  Bytes lit10 = plt;
  lit10[8] = 0x3a;  // IBT PLT's threshold: not what the walker computes
  EXPECT_EQ(rows_of(lit10), "1000 unsupported\n1020 none\n");
  Bytes longer = plt;
  longer[1] = 0x0c;
  longer.push_back(0x96);  // a trailing DW_OP_nop makes it another expression
  EXPECT_EQ(rows_of(longer), "1000 unsupported\n1020 none\n");
}

TEST(UnwindCfi, SignalAugmentationIsSignal) {
  EXPECT_EQ(rows_of({0x0f, 0x05, 0x77, 0xa0, 0x01, 0x06, 0x00}, kCieInsns, "zRS", {0x03}),
            "1000 signal\n1020 none\n");
}

// The stats count each FDE once per form its program uses, and whether gp cut it.
TEST(UnwindCfi, StatsCountTheFormsEachFdeUses) {
  using gp::unwind::CfiForm;
  CfiWriter w;
  const size_t c = w.cie();
  w.fde(c, 0x1000, 0x10, kRbpFrame);                                   // rsp, rbp, offset
  w.fde(c, 0x1010, 0x10, {0x0f, 0x05, 0x77, 0x08, 0x06, 0x23, 0x08});  // deref
  w.fde(c, 0x1020, 0x10, {0x41, 0x0c, 0x00, 0x08});                    // rsp, then rax+8
  w.fde(c, 0x1030, 0x10, {0x0f, 0x03, 0x73, 0x08, 0x06, 0x10, 0x03, 0x01, 0x30});  // other expr
  w.fde(c, 0x1040, 0x10, {});                                                      // the CIE's rule
  w.fde(c, 0x1050, 0x10, {0x3f});                                                  // unknown opcode
  CfiInput in;
  in.eh_frame = gp::unwind::CfiSection{w.out, 0x5000};
  in.survey = true;
  const auto t = build_table_from_sections(in);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const auto& s = t->stats;
  const auto n = [&](const auto& counts, CfiForm f) { return counts[static_cast<size_t>(f)]; };
  EXPECT_EQ(s.fdes, 6u);
  EXPECT_EQ(s.fdes_unsupported, 1u);  // the unknown opcode: the program is not followed
  EXPECT_EQ(s.fdes_with_unsupported_rows, 2u);
  EXPECT_EQ(s.fdes_register, 1u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::cfa_rsp), 3u);  // the expressions and the unknown opcode: not
  EXPECT_EQ(n(s.form_fdes, CfiForm::cfa_rbp), 1u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::saved_at_offset), 1u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::cfa_expr_deref), 1u);
  EXPECT_EQ(n(s.form_fdes_unsupported, CfiForm::cfa_expr_deref), 0u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::cfa_register), 1u);
  EXPECT_EQ(n(s.form_fdes_register, CfiForm::cfa_register), 1u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::cfa_expr_other), 1u);
  EXPECT_EQ(n(s.form_fdes_unsupported, CfiForm::cfa_expr_other), 1u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::saved_expression), 1u);
  EXPECT_EQ(n(s.form_fdes, CfiForm::unknown_opcode), 1u);
  EXPECT_EQ(n(s.form_fdes_unsupported, CfiForm::unknown_opcode), 1u);
  EXPECT_STREQ(gp::unwind::cfi_form_name(CfiForm::cfa_expr_deref), "cfa-expr-deref");
  // Without `survey` (gp-record's builds) the forms are not counted.
  in.survey = false;
  const auto plain = build_table_from_sections(in);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->stats.form_fdes[static_cast<size_t>(CfiForm::cfa_rsp)], 0u);
  EXPECT_EQ(plain->rows, t->rows);
}

TEST(UnwindCfi, MalformedProgramsBecomeUnsupportedFromThere) {
  EXPECT_EQ(rows_of({0x41, 0x0e, 0x10, 0x41, 0x1f}),  // 0x1f: no such opcode
            "1000 rsp+8\n1001 rsp+16\n1002 unsupported\n1020 none\n");
  EXPECT_EQ(rows_of({0x41, 0x0b}), "1000 rsp+8\n1001 unsupported\n1020 none\n");  // underflow
  EXPECT_EQ(rows_of(Bytes(40, 0x0a)), "1000 unsupported\n1020 none\n");           // too deep
  EXPECT_EQ(rows_of({0x41, 0x0e}), "1000 rsp+8\n1001 unsupported\n1020 none\n");  // truncated
  EXPECT_EQ(rows_of({0x41, 0x05, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                     0x80, 0x01}),
            "1000 rsp+8\n1001 unsupported\n1020 none\n");  // uleb longer than 64 bits
  // A CIE whose program advances (there is no location in a CIE) or cannot be parsed.
  EXPECT_EQ(rows_of({}, {0x0c, 0x07, 0x08, 0x41}), "1000 unsupported\n1020 none\n");
  EXPECT_EQ(rows_of({}, {0x0c, 0x07}), "1000 unsupported\n1020 none\n");
}

TEST(UnwindCfi, AbsurdAdvancesStopAtTheFdesEnd) {
  EXPECT_EQ(rows_of({0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 0x10, 0x41, 0x0e, 0x18}),
            "1000 rsp+8\n1020 none\n");
  EXPECT_EQ(rows_of({0x1d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0e, 0x10}),
            "1000 rsp+8\n1020 none\n");
  // A code alignment factor of 2^62: every advance overflows.
  Bytes bytes;
  {
    CfiWriter v;
    const size_t at = 0;
    put32(v.out, 0);
    put32(v.out, 0);
    v.out.insert(v.out.end(), {1, 'z', 'R', 0});
    v.out.insert(v.out.end(), {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40});  // 2^62
    v.out.insert(v.out.end(), {0x78, 16, 1, 0x03});
    v.out.insert(v.out.end(), kCieInsns.begin(), kCieInsns.end());
    patch32(v.out, at, static_cast<uint32_t>(v.out.size() - 4));
    v.fde(at, 0x1000, 0x20, {0x44, 0x0e, 0x10, 0x44, 0x0e, 0x18});
    bytes = v.out;
  }
  auto t = compile(bytes);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(rows_text(*t), "1000 rsp+8\n1020 none\n");
}

TEST(UnwindCfi, BadCiePointersSkipTheFde) {
  CfiWriter w;
  const size_t c = w.cie();
  const size_t f1 = w.fde(c, 0x1000, 0x10, {});
  w.fde(f1, 0x2000, 0x10, {});  // points at an FDE
  const size_t self = w.out.size();
  w.fde(self, 0x3000, 0x10, {});  // points at itself (a CIE pointer of 4: its own length)
  w.fde(c, 0x4000, 0x10, {});
  Bytes bytes = w.out;
  // One more whose pointer leads before the section.
  CfiWriter tail;
  tail.out = bytes;
  const size_t f5 = tail.fde(c, 0x5000, 0x10, {});
  patch32(tail.out, f5 + 4, 0x7fffffff);
  auto t = compile(tail.out);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(rows_text(*t), "1000 rsp+8\n1010 none\n4000 rsp+8\n4010 none\n");
  EXPECT_EQ(t->stats.fdes, 2u);
  EXPECT_EQ(t->stats.fdes_skipped, 3u);
}

TEST(UnwindCfi, CiesGpDoesNotUnderstandSkipTheirFdes) {
  EXPECT_EQ(rows_of({}, kCieInsns, "zRX", {0x03}), "");         // unknown augmentation letter
  EXPECT_EQ(rows_of({}, kCieInsns, "eh", {}), "");              // pre-2000 GCC
  EXPECT_EQ(rows_of({}, kCieInsns, "zR", {0x07}), "");          // unknown pointer format
  EXPECT_EQ(rows_of({}, kCieInsns, "zR", {0x9b}), "");          // indirect FDE addresses
  EXPECT_EQ(rows_of({}, kCieInsns, "zPLR", {0x00, 1, 2}), "");  // personality cut short
  // 'P' with an 8-byte personality pointer and 'L': skipped correctly.
  EXPECT_EQ(rows_of({}, kCieInsns, "zPLR", {0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x1b, 0x03}),
            "1000 rsp+8\n1020 none\n");
  CfiWriter w;
  const size_t c = w.cie("zR", {0x03}, kCieInsns, /*version=*/2);
  w.fde(c, 0x1000, 0x20, {});
  auto t = compile(w.out);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->rows.empty());
  EXPECT_EQ(t->stats.fdes_skipped, 1u);
}

TEST(UnwindCfi, PointerEncodings) {
  // pcrel sdata4 (what GCC emits): the FDE's start is relative to the field's own address.
  CfiWriter w;
  const size_t c = w.cie("zR", {0x1b});
  const size_t f = w.fde(c, 0, 0x10, {});
  const uint64_t section = 0x5000;
  const uint64_t field = section + f + 8;
  patch32(w.out, f + 8, static_cast<uint32_t>(0x1000 - field));
  auto t = compile(w.out, true, section);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(rows_text(*t), "1000 rsp+8\n1010 none\n");

  // datarel sdata4 against the .got's address.
  CfiWriter d;
  const size_t dc = d.cie("zR", {0x3b});
  d.fde(dc, 0x100, 0x10, {});
  CfiInput in;
  in.eh_frame = gp::unwind::CfiSection{d.out, section};
  in.data_base = 0x7000;
  auto dt = build_table_from_sections(in);
  ASSERT_TRUE(dt.ok());
  EXPECT_EQ(rows_text(*dt), "7100 rsp+8\n7110 none\n");
}

TEST(UnwindCfi, DebugFrameEntries) {
  CfiWriter w;
  w.eh = false;
  const size_t c = w.cie("", {}, kCieInsns, /*version=*/3);
  w.fde(c, 0x2000, 0x20, kRbpFrame);
  w.fde(c, 0x1000, 0x08, {});  // unsorted, as .debug_frame may be
  w.fde(c, 0, 0x08, {});       // discarded code's FDE: outside the text
  CfiInput in;
  in.debug_frame = gp::unwind::CfiSection{w.out, 0};
  in.text_ranges = {{0x1000, 0x3000}};
  auto t = build_table_from_sections(in);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->stats.source, gp::unwind::Source::debug_frame);
  EXPECT_EQ(rows_text(*t),
            "1000 rsp+8\n1008 none\n2000 rsp+8\n2001 rsp+16 rbp@cfa-16\n2004 rbp+16 rbp@cfa-16\n"
            "200e rsp+8 rbp@cfa-16\n2020 none\n");
  EXPECT_EQ(t->stats.fdes_skipped, 1u);
}

TEST(UnwindCfi, Dwarf64Lengths) {
  // A 64-bit-length CIE and FDE in .debug_frame (CIE id and pointer are 8 bytes there).
  Bytes b;
  put32(b, 0xffffffffu);
  put64(b, 0);
  const size_t cie_body = b.size();
  put64(b, ~uint64_t{0});
  b.insert(b.end(), {3, 0, 1, 0x78, 16});
  b.insert(b.end(), kCieInsns.begin(), kCieInsns.end());
  for (int i = 0; i < 8; ++i) b[4 + i] = static_cast<uint8_t>((b.size() - cie_body) >> (8 * i));
  const size_t fde = b.size();
  put32(b, 0xffffffffu);
  put64(b, 8 + 16 + 3);
  put64(b, 0);  // CIE at offset 0
  put64(b, 0x1000);
  put64(b, 0x10);
  b.insert(b.end(), {0x41, 0x0e, 0x10});
  ASSERT_EQ(b.size() - fde - 12, 8u + 16 + 3);
  auto t = compile(b, false);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(rows_text(*t), "1000 rsp+8\n1001 rsp+16\n1010 none\n");
}

TEST(UnwindCfi, OverlapsAndDuplicatesAreClipped) {
  CfiWriter w;
  const size_t c = w.cie();
  w.fde(c, 0x1000, 0x40, {0x0e, 0x10});
  w.fde(c, 0x1020, 0x10, {});
  w.fde(c, 0x1020, 0x10, {0x0e, 0x30});  // same start: the first one stays
  w.fde(c, 0x1080, 0, {});               // empty: skipped
  auto t = compile(w.out);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(rows_text(*t), "1000 rsp+16\n1020 rsp+8\n1030 none\n");
  EXPECT_EQ(t->stats.fdes_skipped, 2u);
}

TEST(UnwindCfi, BadLengthsEndTheSection) {
  CfiWriter w;
  const size_t c = w.cie();
  w.fde(c, 0x1000, 0x10, {});
  const size_t bad = w.fde(c, 0x2000, 0x10, {});
  w.fde(c, 0x3000, 0x10, {});
  patch32(w.out, bad, 0x7ffffff0);  // runs past the section
  auto t = compile(w.out);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(rows_text(*t), "1000 rsp+8\n1010 none\n");
  patch32(w.out, bad, 0xfffffff5);  // a reserved length
  t = compile(w.out);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(rows_text(*t), "1000 rsp+8\n1010 none\n");
  patch32(w.out, 0, 0x7ffffff0);  // the CIE's own length
  t = compile(w.out);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->rows.empty());
  EXPECT_FALSE(compile({}).ok()) << "no CFI at all is an error";
}

TEST(UnwindCfi, TooManyRowsIsAnError) {
  CfiWriter w;
  const size_t c = w.cie();
  Bytes alternate;
  for (int i = 0; i < 30; ++i)
    alternate.insert(alternate.end(), {0x41, 0x0e, 0x10, 0x41, 0x0e, 0x08});
  w.fde(c, 0x1000, 0x1000, alternate);  // 62 rows with its `none`
  CfiInput in;
  in.eh_frame = gp::unwind::CfiSection{w.out, 0};
  in.max_rows = 62;
  auto t = build_table_from_sections(in);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->stats.rows_raw, 62u);
  in.max_rows = 61;
  t = build_table_from_sections(in);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "more than 61 unwind rows");
  w.fde(c, 0x3000, 0x1000, alternate);  // the second FDE crosses the budget
  in.eh_frame = gp::unwind::CfiSection{w.out, 0};
  in.max_rows = 100;
  EXPECT_FALSE(build_table_from_sections(in).ok());
  // More FDEs than rows allowed: refused while parsing, before they take memory.
  CfiWriter many;
  const size_t mc = many.cie();
  for (uint32_t i = 0; i < 4; ++i) many.fde(mc, 0x1000 + 0x10 * i, 0x10, {});
  in.eh_frame = gp::unwind::CfiSection{many.out, 0};
  in.max_rows = 3;
  t = build_table_from_sections(in);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "more than 3 FDEs");
  in.max_rows = 5;  // 4 contiguous FDEs: 4 rows and the final none
  EXPECT_TRUE(build_table_from_sections(in).ok());
}

TEST(UnwindCfi, EveryTruncationIsSafe) {
  CfiWriter w;
  const size_t c = w.cie("zPLR", {0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x1b, 0x03});
  w.fde(c, 0x1000, 0x40, kRbpFrame);
  w.fde(c, 0x1040, 0x40, {0x0a, 0x41, 0x0e, 0x10, 0x0b, 0x2e, 0x08, 0x41});
  for (size_t n = 1; n <= w.out.size(); ++n) {
    const Bytes prefix(w.out.begin(), w.out.begin() + static_cast<std::ptrdiff_t>(n));
    auto t = compile(prefix);
    ASSERT_TRUE(t.ok()) << n;
    expect_invariants(*t);
  }
}

// Seeded random damage of a valid section: any result must keep the table's contract.
TEST(UnwindCfi, RandomDamageIsSafe) {
  CfiWriter w;
  const size_t c = w.cie("zR", {0x1b});
  const size_t s = w.cie("zRS", {0x03});
  for (uint32_t i = 0; i < 8; ++i) w.fde(c, 0, 0x40, kRbpFrame);
  w.fde(s, 0x9000, 0x10, {});
  std::mt19937 rng(24);
  for (int round = 0; round < 3000; ++round) {
    Bytes b = w.out;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    auto t = compile(b, true, rng() % 2 ? 0x5000 : 0xfffffffffffff000);
    if (!t.ok()) continue;
    expect_invariants(*t);
    if (HasFatalFailure()) return;
  }
}

// Damaged copies of a real binary through the ELF front end (libelf + the parser).
TEST(UnwindCfi, DamagedElfFilesAreSafe) {
  std::ifstream in(GP_UNWIND_EH_FRAME_FIXTURE, std::ios::binary);
  const Bytes file((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(file.size(), 4096u);
  for (size_t n = 0; n < file.size(); n += n < 256 ? 1 : 97) {
    auto t = gp::unwind::build_table(std::span<const uint8_t>(file.data(), n));
    if (t.ok()) expect_invariants(*t);
  }
  // Random bytes inside .eh_frame (and elsewhere) of the file.
  ElfFile f(GP_UNWIND_EH_FRAME_FIXTURE);
  const auto eh = f.section_offset(".eh_frame");
  ASSERT_TRUE(eh);
  ASSERT_LE(eh->first + eh->second, file.size());
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    Bytes b = file;
    for (int i = 0; i < 8; ++i) b[eh->first + rng() % eh->second] = static_cast<uint8_t>(rng());
    b[rng() % b.size()] = static_cast<uint8_t>(rng());
    auto t = gp::unwind::build_table(std::span<const uint8_t>(b));
    if (t.ok()) expect_invariants(*t);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gp::test::unwind
