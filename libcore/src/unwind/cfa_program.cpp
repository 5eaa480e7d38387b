// DW_CFA_* interpreter for x86-64 (DWARF register numbers: 6 rbp, 7 rsp, 16 return address).

#include "unwind/cfa_program.h"

#include <array>
#include <cstring>

#include "unwind/byte_cursor.h"

namespace gp::unwind {
namespace {

constexpr uint64_t kRbp = 6;
constexpr uint64_t kRsp = 7;
constexpr uint64_t kRa = 16;
// GCC nests remember_state once or twice; deeper programs are refused.
constexpr int kMaxRemember = 32;

// The lazy-PLT CFA expression binutils' ld writes for .plt (elf_x86_64_eh_frame_plt):
// DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3;
// DW_OP_shl; DW_OP_plus — CFA = rsp + N + ((rip & 15) >= 11 ? 8 : 0). Other expressions
// (the IBT/BND PLT's lit10/lit5 variants included) are not something gp's walker evaluates.
bool match_plt_expression(ByteCursor expr, int64_t& offset) {
  if (expr.u8() != 0x77) return false;
  offset = expr.sleb();
  static constexpr uint8_t kTail[] = {0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
  if (!expr.ok() || expr.remaining() != sizeof(kTail)) return false;
  return std::memcmp(expr.pos(), kTail, sizeof(kTail)) == 0;
}

// A CFA loaded from the stack: DW_OP_bregN K; DW_OP_deref; and optionally DW_OP_plus_uconst M,
// for N = rsp or rbp — CFA = *(reg + K) + M. OpenSSL's perlasm writes it for functions that
// realign rsp and keep the caller's rsp in a stack slot (libcrypto's AES-GCM, SHA, ChaCha).
bool match_deref_expression(ByteCursor expr, uint64_t& reg, int64_t& offset, int64_t& add) {
  const uint8_t op = expr.u8();
  if (op != 0x70 + kRsp && op != 0x70 + kRbp) return false;
  reg = op - 0x70;
  offset = expr.sleb();
  if (expr.u8() != 0x06) return false;  // DW_OP_deref
  add = 0;
  if (expr.ok() && expr.remaining() > 0) {
    if (expr.u8() != 0x23) return false;  // DW_OP_plus_uconst
    const uint64_t m = expr.uleb();
    if (m > 0xffff) return false;
    add = static_cast<int64_t>(m);
  }
  return expr.ok() && expr.remaining() == 0;
}

class Interpreter {
 public:
  Interpreter(const Cie& cie, const FrameState* init, FrameState start, uint64_t loc,
              uint64_t limit, std::vector<Row>* rows, size_t max_rows = 0, bool survey = false)
      : cie_(cie),
        init_(init),
        st_(start),
        loc_(loc),
        limit_(limit),
        rows_(rows),
        max_rows_(max_rows),
        survey_(survey) {}

  // Runs the program; false when it could not be followed (the state is then broken).
  bool run(ByteCursor c) {
    while (!c.at_end()) {
      switch (step(c)) {
        case Step::next:
          break;
        case Step::done:
          return true;
        case Step::fail:
          return fail();
      }
      if (!c.ok()) return fail();
    }
    if (rows_ && loc_ < limit_) emit();
    return true;
  }

  const FrameState& state() const { return st_; }
  bool overflow() const { return overflow_; }
  uint32_t forms() const { return forms_; }

 private:
  enum class Step { next, done, fail };

  bool fail() {
    st_.broken = true;
    if (rows_ && loc_ < limit_) emit();
    return false;
  }

  void note(CfiForm form) { forms_ |= uint32_t{1} << static_cast<unsigned>(form); }

  // The CFA form of a row in state st_.
  void note_cfa() {
    if (st_.broken) return;
    switch (st_.cfa_kind) {
      case FrameState::reg_offset:
        note(st_.cfa_register == kRsp   ? CfiForm::cfa_rsp
             : st_.cfa_register == kRbp ? CfiForm::cfa_rbp
                                        : CfiForm::cfa_register);
        return;
      case FrameState::plt:
        return note(CfiForm::cfa_expr_plt);
      case FrameState::deref:
        return note(CfiForm::cfa_expr_deref);
      case FrameState::other:
        return note(CfiForm::cfa_expr_other);
    }
  }

  // Appends the row of [loc_, ...); false (and overflow_) when the row budget is spent.
  bool emit() {
    if (survey_ && cfa_changed_) {
      note_cfa();
      cfa_changed_ = false;
    }
    const Row row = to_row(st_, loc_);
    if (!rows_->empty() && rows_->back().address == loc_) {
      rows_->back() = row;
    } else if (rows_->size() >= max_rows_) {
      overflow_ = true;
      return false;
    } else {
      rows_->push_back(row);
    }
    return true;
  }

  Step advance(uint64_t delta) {
    if (!rows_) return Step::fail;  // a CIE has no location to advance
    uint64_t bytes = 0;
    uint64_t next = 0;
    if (__builtin_mul_overflow(delta, cie_.code_align, &bytes) ||
        __builtin_add_overflow(loc_, bytes, &next)) {
      next = ~uint64_t{0};
    }
    return move_to(next);
  }

  Step move_to(uint64_t next) {
    if (next == loc_) return Step::next;
    if (!emit()) return Step::done;
    loc_ = next;
    return loc_ >= limit_ ? Step::done : Step::next;
  }

  RegRule* tracked(uint64_t reg) {
    if (reg == kRbp) return &st_.rbp;
    if (reg == kRa) return &st_.ra;
    return nullptr;
  }
  void set(uint64_t reg, RegRule rule) {
    if (RegRule* r = tracked(reg)) *r = rule;
  }
  bool set_offset(uint64_t reg, int64_t factored) {
    int64_t off = 0;
    if (__builtin_mul_overflow(factored, cie_.data_align, &off)) return false;
    set(reg, RegRule{RegRule::at_cfa, off});
    return true;
  }
  void restore(uint64_t reg) {
    if (RegRule* r = tracked(reg)) *r = init_ ? (reg == kRbp ? init_->rbp : init_->ra) : RegRule{};
  }
  bool def_cfa(uint64_t reg, int64_t factored, bool factor) {
    int64_t off = factored;
    if (factor && __builtin_mul_overflow(factored, cie_.data_align, &off)) return false;
    st_.cfa_kind = FrameState::reg_offset;
    st_.cfa_register = reg;
    st_.cfa_offset = off;
    return true;
  }
  bool def_cfa_offset(int64_t off) {
    if (st_.cfa_kind != FrameState::reg_offset) st_.cfa_kind = FrameState::other;
    st_.cfa_offset = off;
    return true;
  }
  bool def_cfa_expression(ByteCursor& c) {
    const uint64_t len = c.uleb();
    if (!c.ok() || len > c.remaining()) return false;
    int64_t off = 0, add = 0;
    uint64_t reg = 0;
    const ByteCursor expr(c.pos(), c.pos() + len);
    c.skip(len);
    st_.cfa_add = 0;
    if (match_plt_expression(expr, off)) {
      st_.cfa_kind = FrameState::plt;
      st_.cfa_offset = off;
    } else if (match_deref_expression(expr, reg, off, add)) {
      st_.cfa_kind = FrameState::deref;
      st_.cfa_register = reg;
      st_.cfa_offset = off;
      st_.cfa_add = add;
    } else {
      st_.cfa_kind = FrameState::other;
      st_.cfa_offset = 0;
    }
    return true;
  }
  bool skip_block(ByteCursor& c) {
    const uint64_t len = c.uleb();
    return c.ok() && c.skip(len);
  }

  Step step(ByteCursor& c) {
    const uint8_t op = c.u8();
    switch (op >> 6) {
      case 1:
        return advance(op & 0x3f);
      case 2:
        if (survey_) note(CfiForm::saved_at_offset);
        return set_offset(op & 0x3f, static_cast<int64_t>(c.uleb())) ? Step::next : Step::fail;
      case 3:
        if (survey_) note(CfiForm::restore);
        restore(op & 0x3f);
        return Step::next;
      default:
        break;
    }
    return extended(op, c);
  }

  Step extended(uint8_t op, ByteCursor& c) {
    auto ok = [](bool b) { return b ? Step::next : Step::fail; };
    if (survey_) note_extended(op);
    switch (op) {
      case 0x00:
        return Step::next;  // nop
      case 0x01:
        return set_loc(c);
      case 0x02:
        return advance(c.u8());
      case 0x03:
        return advance(c.u16());
      case 0x04:
        return advance(c.u32());
      case 0x1d:
        return advance(c.u64());  // DW_CFA_MIPS_advance_loc8
      case 0x05: {                // offset_extended
        const uint64_t reg = c.uleb();
        return ok(set_offset(reg, static_cast<int64_t>(c.uleb())));
      }
      case 0x11: {  // offset_extended_sf
        const uint64_t reg = c.uleb();
        return ok(set_offset(reg, c.sleb()));
      }
      case 0x2f: {  // GNU_negative_offset_extended
        const uint64_t reg = c.uleb();
        return ok(set_offset(reg, -static_cast<int64_t>(c.uleb() & 0x3fffffffffffffff)));
      }
      case 0x06:
        restore(c.uleb());
        return Step::next;
      case 0x07:
        set(c.uleb(), RegRule{RegRule::undefined, 0});
        return Step::next;
      case 0x08:
        set(c.uleb(), RegRule{RegRule::same, 0});
        return Step::next;
      case 0x09: {  // register: saved in another register
        const uint64_t reg = c.uleb();
        c.uleb();
        set(reg, RegRule{RegRule::other, 0});
        return Step::next;
      }
      case 0x0a:  // remember_state
        if (depth_ == kMaxRemember) return Step::fail;
        stack_[depth_++] = st_;
        return Step::next;
      case 0x0b:  // restore_state (the CFA rule included, as libgcc and elfutils do)
        if (depth_ == 0) return Step::fail;
        st_ = stack_[--depth_];
        return Step::next;
      case 0x0c: {  // def_cfa
        const uint64_t reg = c.uleb();
        return ok(def_cfa(reg, static_cast<int64_t>(c.uleb()), false));
      }
      case 0x12: {  // def_cfa_sf
        const uint64_t reg = c.uleb();
        return ok(def_cfa(reg, c.sleb(), true));
      }
      case 0x0d: {  // def_cfa_register
        const uint64_t reg = c.uleb();
        if (st_.cfa_kind != FrameState::reg_offset) st_.cfa_kind = FrameState::other;
        st_.cfa_register = reg;
        return Step::next;
      }
      case 0x0e:
        return ok(def_cfa_offset(static_cast<int64_t>(c.uleb())));
      case 0x13: {  // def_cfa_offset_sf
        int64_t off = 0;
        if (__builtin_mul_overflow(c.sleb(), cie_.data_align, &off)) return Step::fail;
        return ok(def_cfa_offset(off));
      }
      case 0x0f:
        return ok(def_cfa_expression(c));
      case 0x10:    // expression: saved at an address computed by an expression
      case 0x16: {  // val_expression: the value is computed
        const uint64_t reg = c.uleb();
        set(reg, RegRule{RegRule::other, 0});
        return ok(skip_block(c));
      }
      case 0x14:    // val_offset
      case 0x15: {  // val_offset_sf
        const uint64_t reg = c.uleb();
        if (op == 0x14) c.uleb();
        else c.sleb();
        set(reg, RegRule{RegRule::other, 0});
        return Step::next;
      }
      case 0x2e:
        c.uleb();
        return Step::next;  // GNU_args_size: the walker does not need it
      default:
        return Step::fail;  // unknown opcode: the rest cannot be parsed
    }
  }

  // The form of an extended opcode (the CFA's form is noted with the row it holds for, in
  // emit(), once each time the CFA rule changes: not at every row).
  void note_extended(uint8_t op) {
    switch (op) {
      case 0x05:
      case 0x11:
      case 0x2f:
        return note(CfiForm::saved_at_offset);
      case 0x06:
        return note(CfiForm::restore);
      case 0x07:
        return note(CfiForm::undefined);
      case 0x08:
        return note(CfiForm::same_value);
      case 0x09:
        return note(CfiForm::saved_in_register);
      case 0x0a:
        return note(CfiForm::remember_state);
      case 0x0b:
        cfa_changed_ = true;
        return note(CfiForm::remember_state);
      case 0x10:
        return note(CfiForm::saved_expression);
      case 0x16:
        return note(CfiForm::val_expression);
      case 0x14:
      case 0x15:
        return note(CfiForm::val_offset);
      case 0x2e:
        return note(CfiForm::args_size);
      case 0x00:
      case 0x01:
      case 0x02:
      case 0x03:
      case 0x04:
      case 0x1d:
        return;
      case 0x0c:
      case 0x0d:
      case 0x0e:
      case 0x0f:
      case 0x12:
      case 0x13:
        cfa_changed_ = true;  // noted with the next row
        return;
      default:
        return note(CfiForm::unknown_opcode);
    }
  }

  Step set_loc(ByteCursor& c) {
    // GCC never emits it; a pc-relative operand would need the field's address.
    if (!rows_ || (cie_.fde_encoding & 0x70) != 0) return Step::fail;
    const auto next = read_encoded(c, cie_.fde_encoding, PointerBases{}, true);
    if (!next || *next < loc_) return Step::fail;
    return move_to(*next);
  }

  const Cie& cie_;
  const FrameState* init_;
  FrameState st_;
  std::array<FrameState, kMaxRemember> stack_;
  int depth_ = 0;
  uint64_t loc_;
  uint64_t limit_;
  std::vector<Row>* rows_;
  size_t max_rows_;
  bool overflow_ = false;
  bool survey_;
  uint32_t forms_ = 0;
  bool cfa_changed_ = true;  // the CFA rule changed since the last row: note_cfa() at the next
};

}  // namespace

FrameState initial_state(const Cie& cie) {
  // Before the CIE's own instructions: the psABI's state at a call's target (CFA = rsp + 8, return
  // address at CFA - 8, rbp unchanged), as elfutils' x86-64 backend presets it.
  FrameState start;
  start.ra = RegRule{RegRule::at_cfa, -8};
  if (!cie.usable || cie.ra_register != kRa) {
    start.broken = true;
    return start;
  }
  Interpreter interp(cie, nullptr, start, 0, 0, nullptr);
  if (!interp.run(ByteCursor(cie.insns, cie.insns_end))) {
    FrameState broken = interp.state();
    broken.broken = true;
    return broken;
  }
  return interp.state();
}

RunResult run_fde(const Fde& fde, uint64_t limit, const Cie& cie, const FrameState& init,
                  size_t max_rows, std::vector<Row>& rows, bool survey) {
  if (rows.size() >= max_rows) return RunResult{init.broken, true};
  if (init.broken) {
    rows.push_back(to_row(init, fde.start));
    return RunResult{false, false};
  }
  Interpreter interp(cie, &init, init, fde.start, limit, &rows, max_rows, survey);
  const bool followed = interp.run(ByteCursor(fde.insns, fde.insns_end));
  return RunResult{followed, interp.overflow(), interp.forms()};
}

Row to_row(const FrameState& s, uint64_t address) {
  Row row{address, Rule::unsupported, 0, 0};
  if (s.broken) return row;
  if (s.ra.kind == RegRule::undefined) {
    row.rule = Rule::end;
    return row;
  }
  if (s.ra.kind != RegRule::at_cfa || s.ra.offset != -8) return row;
  switch (s.rbp.kind) {
    case RegRule::same:
    case RegRule::undefined:
      break;
    case RegRule::at_cfa:
      if (s.rbp.offset == 0) return row;  // not representable: 0 means "unchanged"
      row.rbp_offset = s.rbp.offset;
      break;
    case RegRule::other:
      return row;
  }
  if (s.cfa_kind == FrameState::plt) {
    row.rule = Rule::plt;
  } else if (s.cfa_kind == FrameState::deref &&
             (s.cfa_register == kRsp || s.cfa_register == kRbp)) {
    row.rule = s.cfa_register == kRsp ? Rule::deref_rsp : Rule::deref_rbp;
    row.cfa_add = s.cfa_add;
  } else if (s.cfa_kind == FrameState::reg_offset && s.cfa_register == kRsp) {
    row.rule = Rule::rsp;
  } else if (s.cfa_kind == FrameState::reg_offset && s.cfa_register == kRbp) {
    row.rule = Rule::rbp;
  } else if (s.cfa_kind == FrameState::reg_offset && s.cfa_register < 16) {
    row.rule = Rule::reg;
    row.cfa_register = static_cast<uint8_t>(s.cfa_register);
  } else {
    row.rbp_offset = 0;
    return row;
  }
  row.cfa_offset = s.cfa_offset;
  return row;
}

}  // namespace gp::unwind
