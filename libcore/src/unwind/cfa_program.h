#pragma once
// Executes DWARF call-frame instructions (DWARF 5 §6.4.2) for x86-64 and reduces each row of the
// resulting table to the three things gp's walker needs: the CFA, the return address (must be at
// CFA-8 or undefined) and the saved rbp. Every other register is tracked only as far as needed to
// parse the program. Work is linear in the program's size; the remember stack is bounded.

#include <cstdint>
#include <vector>

#include "gp/unwind/table.h"
#include "unwind/cfi_entries.h"

namespace gp::unwind {

// The rule of one register the walker cares about.
struct RegRule {
  enum Kind : uint8_t { same, undefined, at_cfa, other } kind = same;
  int64_t offset = 0;  // kind == at_cfa: saved at CFA + offset
  bool operator==(const RegRule&) const = default;
};

struct FrameState {
  // deref: CFA = *(cfa_register + cfa_offset) + cfa_add (a CFA expression of that form).
  enum CfaKind : uint8_t { reg_offset, plt, deref, other } cfa_kind = reg_offset;
  uint64_t cfa_register = 7;
  int64_t cfa_offset = 8;
  int64_t cfa_add = 0;
  RegRule rbp;
  RegRule ra;
  bool broken = false;  // the program could not be followed: every row is unsupported
};

// The state after a CIE's initial instructions (a CIE that advances the location or fails to
// parse gives a broken state).
FrameState initial_state(const Cie& cie);

// Appends the rows of one FDE over [fde.start, limit) (limit <= fde.end) to `rows`, starting
// from `init` (the CIE's initial state). A row at the same address as the previous one replaces
// it. `followed` is false when part of the program could not be followed (its rows are
// unsupported); `overflow` when `rows` would grow past max_rows (the rows are then incomplete).
// With `survey`, `forms` holds the CfiForm bits (1 << form) of what the program used (the
// CFA's forms: of the rows it gave).
struct RunResult {
  bool followed = true;
  bool overflow = false;
  uint32_t forms = 0;
};
RunResult run_fde(const Fde& fde, uint64_t limit, const Cie& cie, const FrameState& init,
                  size_t max_rows, std::vector<Row>& rows, bool survey = false);

// The row a state stands for, at `address`.
Row to_row(const FrameState& state, uint64_t address);

}  // namespace gp::unwind
