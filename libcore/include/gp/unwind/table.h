#pragma once
// Unwind tables for x86-64: a binary's call-frame information (.eh_frame, or .debug_frame where
// the binary has no usable .eh_frame) compiled into sorted rows that say, for each address range,
// how to find the caller's frame. gp-record loads them (packed, see pack()) into the BPF maps that
// its in-kernel unwinder reads (bpf/profile.h, struct gp_unwind_row / gp_unwind_page).
//
// Addresses are ELF virtual addresses, as in the file's program headers and symbols; the loader
// adds the mapping's bias. Input is untrusted (any file a sampled process maps): every read is
// bounds-checked, programs and counts are bounded, and CFI that gp cannot follow becomes
// `unsupported` rows (the walker then marks the stack truncated), never a wrong rule.
// Functions here are reentrant and thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gp/util/result.h"

namespace gp::unwind {

// How to find the caller's frame. Values equal bpf/profile.h's enum gp_unwind_kind.
enum class Rule : uint8_t {
  none = 0,         // no CFI covers the address (gaps between FDEs, after the last one)
  rsp = 1,          // CFA = rsp + cfa_offset
  rbp = 2,          // CFA = rbp + cfa_offset
  plt = 3,          // CFA = rsp + cfa_offset + ((rip & 15) >= 11 ? 8 : 0): the lazy-PLT expression
  signal = 4,       // a sigreturn trampoline ('S' augmentation): registers come from the ucontext
  end = 5,          // return address undefined (_start, a clone child): the outermost frame
  unsupported = 6,  // CFI gp cannot follow: RA not at CFA-8, CFA from another register or an
                    // unknown expression, rbp saved other than at CFA+N, malformed instructions
  // (7 is the BPF walker's GP_UNWIND_PENDING, never in a table.)
  deref_rsp = 8,  // CFA = *(rsp + cfa_offset) + cfa_add: a stack pointer saved on the stack
                  // (DW_CFA_def_cfa_expression: DW_OP_breg7 N; DW_OP_deref; DW_OP_plus_uconst M),
                  // as OpenSSL's assembly describes a frame realigned for vector registers
  deref_rbp = 9,  // CFA = *(rbp + cfa_offset) + cfa_add (DW_OP_breg6 N; DW_OP_deref; ...)
  reg = 10,       // CFA = another general register (Row::cfa_register) + cfa_offset: ld.so's lazy
                  // binder (rbx), OpenSSL's prologues and epilogues (rax, rsi, r11, ...). Only the
                  // sampled frame's registers are known: the walker follows it in the leaf frame
                  // and cuts the stack anywhere else (truncated, reason `register`)
};

// Name of a rule ("rsp", "plt", ...), for diagnostics and tests.
const char* rule_name(Rule rule);

// One row: `rule` holds from `address` up to the next row's address. For rsp, rbp and plt the
// return address is at CFA - 8; the caller's rsp is the CFA. rbp_offset: the caller's rbp was
// saved at CFA + rbp_offset; 0 means rbp keeps its value (same value, restored, never saved).
// reg: as rsp, from the register cfa_register.
// deref_rsp and deref_rbp: as rsp and rbp, but the CFA is the word at the register plus
// cfa_offset (which may be negative: a slot in the red zone), plus cfa_add.
// Rules other than rsp/rbp/plt/deref_*/reg carry cfa_offset = rbp_offset = 0.
struct Row {
  uint64_t address = 0;
  Rule rule = Rule::none;
  int64_t cfa_offset = 0;
  int64_t rbp_offset = 0;
  int64_t cfa_add = 0;       // deref_rsp, deref_rbp: added to the word read; 0 for other rules
  uint8_t cfa_register = 0;  // reg: the register's DWARF number (0-15, not 6 or 7); 0 otherwise

  bool operator==(const Row&) const = default;
};

enum class Source : uint8_t { eh_frame, debug_frame, both };

// The DWARF call-frame forms an FDE's program (with its CIE's state) uses, as counted in
// TableStats: how each row finds the CFA, and each kind of register rule (of any register).
enum class CfiForm : uint8_t {
  cfa_rsp,            // CFA = rsp + N (DW_CFA_def_cfa*, def_cfa_offset*, or the CIE's rule)
  cfa_rbp,            // CFA = rbp + N
  cfa_register,       // CFA = another register + N (rule reg: the sampled frame only)
  cfa_expr_plt,       // DW_CFA_def_cfa_expression: the lazy-PLT expression
  cfa_expr_deref,     // DW_CFA_def_cfa_expression: *(rsp or rbp + N) [+ M]
  cfa_expr_other,     // any other CFA expression (or an offset or register changed after one)
  saved_at_offset,    // DW_CFA_offset, offset_extended(_sf), GNU_negative_offset_extended
  saved_in_register,  // DW_CFA_register
  saved_expression,   // DW_CFA_expression
  val_expression,     // DW_CFA_val_expression
  val_offset,         // DW_CFA_val_offset(_sf)
  undefined,          // DW_CFA_undefined
  same_value,         // DW_CFA_same_value
  restore,            // DW_CFA_restore(_extended)
  remember_state,     // DW_CFA_remember_state, restore_state
  args_size,          // DW_CFA_GNU_args_size
  signal,             // a CIE with the 'S' augmentation (sigreturn trampoline)
  unknown_opcode,     // an opcode gp does not know (the rest of the program is unsupported)
};
inline constexpr size_t kCfiForms = static_cast<size_t>(CfiForm::unknown_opcode) + 1;

// Name of a form ("cfa-rsp", "val-expression", ...), for surveys and tests.
const char* cfi_form_name(CfiForm form);

struct TableStats {
  Source source = Source::eh_frame;
  uint64_t cies = 0;              // CIEs parsed
  uint64_t fdes = 0;              // FDEs compiled into rows
  uint64_t fdes_skipped = 0;      // malformed FDEs, bad CIE pointers, empty or out-of-text ranges
  uint64_t fdes_unsupported = 0;  // FDEs whose program could not be followed to its end
  uint64_t rows_raw = 0;          // rows before merging equal neighbours
  // Filled only when CfiInput::survey is set (survey_cfi): the FDEs with at least one row that
  // is unsupported, and with one that is `reg` (followed in the sampled frame only); per
  // CfiForm, the FDEs whose program uses it (an FDE counts once for each form it uses), and of
  // those, the ones with an unsupported row and the ones with a `reg` row.
  uint64_t fdes_with_unsupported_rows = 0;
  uint64_t fdes_register = 0;
  std::array<uint64_t, kCfiForms> form_fdes{};
  std::array<uint64_t, kCfiForms> form_fdes_unsupported{};
  std::array<uint64_t, kCfiForms> form_fdes_register{};
};

// Rows sorted by strictly increasing address; no two neighbours have the same rule and offsets;
// the last row is `none` (where the last FDE ends). Empty when the binary has no CFI.
struct Table {
  std::vector<Row> rows;
  TableStats stats;
};

// The table of the ELF file open on fd (read with libelf; the fd's offset is not used and the fd
// stays open). Error when the file is not a 64-bit x86-64 ELF, has no .eh_frame nor .debug_frame,
// or is too corrupt or too large to compile (more than kMaxRows rows).
Result<Table> build_table(int fd);

// The table of an ELF image in memory: a file's bytes, or a loaded image whose file offsets
// equal its offsets from the load base (the vDSO at AT_SYSINFO_EHDR). The bytes are only read.
Result<Table> build_table(std::span<const uint8_t> image);

// Hard limits on hostile input (the largest real tables: ~3M rows for ClickHouse, .eh_frame of
// a few tens of MiB for browsers and LLVM).
inline constexpr uint64_t kMaxRows = uint64_t{1} << 22;          // rows before merging
inline constexpr uint64_t kMaxSectionBytes = uint64_t{1} << 26;  // per CFI section

// The raw contents of a CFI section and where it is, for build_table_from_sections (tests,
// fuzzing, callers that located the sections themselves).
struct CfiSection {
  std::span<const uint8_t> data;  // empty: absent
  uint64_t address = 0;           // the section's virtual address (base of pc-relative pointers)
};
struct CfiInput {
  CfiSection eh_frame;
  CfiSection debug_frame;
  uint64_t data_base = 0;  // base of DW_EH_PE_datarel pointers (the .got's address)
  uint64_t text_base = 0;  // base of DW_EH_PE_textrel pointers (the .text's address)
  // Executable address ranges [first, second): FDEs outside all of them are skipped (the ones
  // the linker left at 0 for discarded code). Empty: every FDE is kept.
  std::vector<std::pair<uint64_t, uint64_t>> text_ranges;
  uint64_t max_rows = 0;  // rows before merging beyond which the build fails; 0: kMaxRows
  bool survey = false;    // fill TableStats' survey counts (they cost the builder ~7% more)
};

// The stats of the table of the ELF file open on fd, with the survey counts (which CFI forms
// its FDEs use, and what gp makes of them); errors as build_table's.
Result<TableStats> survey_cfi(int fd);

// Which section is used: .eh_frame; .debug_frame when .eh_frame is absent; both (merged, .eh_frame
// winning where they overlap) when .eh_frame has fewer FDEs than .debug_frame (a binary built with
// -fno-asynchronous-unwind-tables -g keeps only its crt files' FDEs in .eh_frame).
Result<Table> build_table_from_sections(const CfiInput& input);

// The BPF maps' representation (identical to bpf/profile.h; gp-record static_asserts it). A row
// is 4 bytes: where it starts in its 4 KiB page and which of the table's rules it holds (a table
// has a few hundred distinct rules for tens of thousands of rows).
struct PackedRule {
  uint16_t cfa_offset;  // bytes; for deref_rsp/deref_rbp a signed 16-bit number
  uint8_t kind;  // Rule in the low 4 bits; above, cfa_add / 8 (deref_rsp/rbp) or cfa_register (reg)
  int8_t rbp_offset;  // rbp saved at CFA + 8 * rbp_offset; 0: rbp keeps its value
  bool operator==(const PackedRule&) const = default;
  // The four bytes as one number (a key for sets of rules).
  uint32_t bits() const {
    return uint32_t{cfa_offset} | uint32_t{kind} << 16 |
           uint32_t{static_cast<uint8_t>(rbp_offset)} << 24;
  }
};
static_assert(sizeof(PackedRule) == 4);

struct PackedRow {
  uint16_t pc;    // (address - PackedTable::base) & 4095: the offset in the row's own page
  uint16_t rule;  // index in PackedTable::rules (in the BPF maps: in the shared rule array)
};
static_assert(sizeof(PackedRow) == 4);

struct PackedPage {
  uint32_t first_row;  // index of the row in force at the page's first byte
  uint32_t count;      // rows from first_row whose pc is below the page's end (>= 1)
};
static_assert(sizeof(PackedPage) == 8);

inline constexpr unsigned kPageShift = 12;  // GP_UNWIND_PAGE_SHIFT
// PackedRule::kind: the Rule in the low bits, a deref rule's cfa_add / 8 or a reg rule's register
// in the high ones (GP_UNWIND_KIND_MASK, GP_UNWIND_ADD_SHIFT).
inline constexpr uint8_t kKindMask = 0x0f;
inline constexpr unsigned kAddShift = 4;
inline constexpr size_t kMaxPackedRules = 65536;

// base: the first row's address rounded down to 4 KiB. A `none` row is put first when the first
// rule starts after base, so every address in [base, base + 4 KiB * pages.size()) has a row in
// force: for p = (address - base) >> kPageShift, the row in force at the page's first byte is
// rows[pages[p].first_row] (it may start in an earlier page), and the rows after it up to count
// start in page p: the last of them whose pc <= the address's offset in the page holds it. A row
// whose offsets do not fit (cfa_offset outside [0, 65535], or for deref_* [-32768, 32767],
// rbp_offset not a multiple of 8 or outside [-1024, 1016], cfa_add not a multiple of 8 or outside
// [0, 120]) becomes unsupported, and equal neighbours are merged again. Empty rows,
// pages and rules for an empty table.
struct PackedTable {
  uint64_t base = 0;
  std::vector<PackedRow> rows;
  std::vector<PackedPage> pages;
  std::vector<PackedRule> rules;  // distinct, in order of first use
};

// Whether a PackedRule::kind is one pack() writes (a table read from a cache is checked with it).
bool packed_kind_known(uint8_t kind);

// The rule of the row in force at `address`, as the BPF walker finds it (tests, tools); nullptr
// outside the table.
const PackedRule* packed_rule_at(const PackedTable& table, uint64_t address);

// Error when the table's range (last row's address - base) does not fit 32 bits, or it has more
// than kMaxPackedRules distinct rules.
Result<PackedTable> pack(const Table& table);

// pack(build_table(...)) without the Table in between, what gp-record loads: the same packed
// table, with a tenth of the memory touched (a large binary's Table is tens of MiB of rows, and
// each fresh 4 KiB costs a page fault). Empty when the binary has no CFI.
Result<PackedTable> build_packed(int fd);
Result<PackedTable> build_packed(std::span<const uint8_t> image);
Result<PackedTable> build_packed_from_sections(const CfiInput& input);

}  // namespace gp::unwind
