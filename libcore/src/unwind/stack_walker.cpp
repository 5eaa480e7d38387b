// walk_stack: the BPF walker's rules (bpf/profile.bpf.c: gp_unwind_step, frame_by_cfa) over a
// copy of the stack. Keep the two in step: a change of the rules there is a change here.
#include "gp/unwind/stack_walker.h"

#include <algorithm>
#include <cstring>

namespace gp::unwind {
namespace {

// Offsets in the signal frame on x86-64: at a sigreturn trampoline's rsp is the ucontext, whose
// mcontext (struct sigcontext) starts 40 bytes in (bpf/profile.bpf.c: GP_SIGCONTEXT_*).
constexpr uint64_t kSigcontextRbp = 40 + 10 * 8;
constexpr uint64_t kSigcontextRsp = 40 + 15 * 8;
constexpr uint64_t kSigcontextRip = 40 + 16 * 8;

// One 8-byte word of the copy at addr; false when any of its bytes is outside the copy.
bool read_word(const StackCopy& stack, uint64_t addr, uint64_t* out) {
  const uint64_t size = stack.bytes.size();
  if (addr < stack.start || size < 8 || addr - stack.start > size - 8) return false;
  std::memcpy(out, stack.bytes.data() + (addr - stack.start), 8);
  return true;
}

// The caller's CFA, return address and rbp by a CFA rule (rsp, rbp, plt), as frame_by_cfa.
// leaf_regs: the sampled registers when this is the sampled frame, else nullptr.
bool frame_by_cfa(const StackCopy& stack, const PackedRule& rule, uint64_t pc, uint64_t sp,
                  uint64_t bp, const UserRegisters* leaf_regs, uint64_t* cfa, uint64_t* ra,
                  uint64_t* next_bp, WalkStop* stop) {
  switch (static_cast<Rule>(rule.kind & kKindMask)) {
    case Rule::reg:
      // Only the sampled frame has its registers (a caller's rax is whatever its callee left).
      if (leaf_regs == nullptr || !leaf_regs->general_known) {
        *stop = WalkStop::register_unknown;
        return false;
      }
      *cfa = leaf_regs->general[rule.kind >> kAddShift] + rule.cfa_offset;
      break;
    case Rule::deref_rsp:
    case Rule::deref_rbp: {
      // The CFA is a stack pointer saved on the stack, plus cfa_add.
      const bool at_rsp = static_cast<Rule>(rule.kind & kKindMask) == Rule::deref_rsp;
      const uint64_t slot = (at_rsp ? sp : bp) + static_cast<int16_t>(rule.cfa_offset);
      if (!read_word(stack, slot, cfa)) {
        *stop = WalkStop::read;
        return false;
      }
      *cfa += uint64_t{static_cast<uint8_t>(rule.kind >> kAddShift)} * 8;
      break;
    }
    case Rule::rbp:
      *cfa = bp + rule.cfa_offset;
      break;
    case Rule::rsp:
      *cfa = sp + rule.cfa_offset;
      break;
    case Rule::plt:
      *cfa = sp + rule.cfa_offset + ((pc & 15) >= 11 ? 8 : 0);
      break;
    default:
      *stop = WalkStop::unsupported;
      return false;
  }
  // A caller's frame is above its callee's: anything else is a corrupt stack or table.
  if (*cfa <= sp || (*cfa & 7) != 0) {
    *stop = WalkStop::bad_frame;
    return false;
  }
  *next_bp = bp;
  // A save slot below sp was popped already (an epilogue whose CFI still names it): rbp holds
  // the caller's value. The BPF walker reads the stale slot, the same value; a copy starts at sp.
  const uint64_t rbp_slot = *cfa + static_cast<uint64_t>(int64_t{rule.rbp_offset} * 8);
  if ((rule.rbp_offset != 0 && rbp_slot >= sp && !read_word(stack, rbp_slot, next_bp)) ||
      !read_word(stack, *cfa - 8, ra)) {
    *stop = WalkStop::read;
    return false;
  }
  return true;
}

}  // namespace

const char* walk_stop_name(WalkStop stop) {
  switch (stop) {
    case WalkStop::complete:
      return "complete";
    case WalkStop::unknown_end:
      return "unknown-end";
    case WalkStop::depth:
      return "depth";
    case WalkStop::read:
      return "read";
    case WalkStop::no_rule:
      return "no-rule";
    case WalkStop::unsupported:
      return "unsupported";
    case WalkStop::bad_frame:
      return "bad-frame";
    case WalkStop::register_unknown:
      return "register";
  }
  return "?";
}

WalkEnd walk_end_of(WalkStop stop) {
  if (stop == WalkStop::complete) return WalkEnd::complete;
  if (stop == WalkStop::unknown_end) return WalkEnd::unknown;
  return WalkEnd::truncated;
}

void ModuleTables::add(const ModuleTable& module) {
  auto at = std::upper_bound(modules_.begin(), modules_.end(), module.start,
                             [](uint64_t start, const ModuleTable& m) { return start < m.start; });
  modules_.insert(at, module);
}

std::optional<PackedRule> ModuleTables::rule_at(uint64_t address) const {
  // The mapping with the greatest start at or below the address (gp_find_mapping).
  auto after = std::upper_bound(modules_.begin(), modules_.end(), address,
                                [](uint64_t a, const ModuleTable& m) { return a < m.start; });
  if (after == modules_.begin()) return std::nullopt;
  const ModuleTable& m = *(after - 1);
  if (address >= m.end || address < m.bias || m.table == nullptr) return std::nullopt;
  // The row in force at the table offset (gp_find_row): the page's first row, or the last row
  // after it that starts at or before the offset in the page.
  const PackedTable& t = *m.table;
  const uint64_t rel = address - m.bias;
  const uint64_t page = rel >> kPageShift;
  if (page >= t.pages.size()) return std::nullopt;
  const PackedPage& pg = t.pages[page];
  if (pg.count == 0 || pg.first_row >= t.rows.size()) return std::nullopt;
  const uint32_t in_page = static_cast<uint32_t>(rel & ((uint64_t{1} << kPageShift) - 1));
  const uint64_t last = std::min<uint64_t>(uint64_t{pg.first_row} + pg.count, t.rows.size());
  uint64_t found = pg.first_row;
  for (uint64_t i = uint64_t{pg.first_row} + 1; i < last && t.rows[i].pc <= in_page; ++i) found = i;
  if (t.rows[found].rule >= t.rules.size()) return std::nullopt;
  return t.rules[t.rows[found].rule];
}

WalkedStack walk_stack(const UserRegisters& regs, const StackCopy& stack, const RuleSource& rules,
                       const WalkOptions& options) {
  WalkedStack out;
  const uint32_t max_frames = std::max<uint32_t>(options.max_frames, 1);
  uint64_t pc = regs.rip, sp = regs.rsp, bp = regs.rbp;
  bool ret_addr = false;  // pc is a return address: its call is at pc - 1
  out.frames.push_back(pc);
  auto stop = [&](WalkStop why) {
    out.stop = why;
    out.end = walk_end_of(why);
    return out;
  };
  for (;;) {
    if (out.frames.size() >= max_frames) return stop(WalkStop::depth);
    const std::optional<PackedRule> found = rules.rule_at(pc - (ret_addr ? 1 : 0));
    const PackedRule rule = found.value_or(PackedRule{0, static_cast<uint8_t>(Rule::none), 0});
    uint64_t cfa = 0, ra = 0;
    const auto kind = static_cast<Rule>(rule.kind);
    if (kind == Rule::end) return stop(WalkStop::complete);
    if (kind == Rule::signal) {
      // The interrupted code's registers, saved by the kernel in the signal frame; its pc is
      // where it was interrupted, not a return address.
      if (!read_word(stack, sp + kSigcontextRbp, &bp) ||
          !read_word(stack, sp + kSigcontextRsp, &cfa) ||
          !read_word(stack, sp + kSigcontextRip, &ra))
        return stop(WalkStop::read);
      ret_addr = false;
    } else if (kind == Rule::none) {
      // A frame-pointer step: {saved rbp, return address} at rbp.
      ++out.fp_frames;
      if (!found) ++out.untabled_frames;
      if (bp == 0) return stop(WalkStop::unknown_end);  // the ABI's end, but no CFI says so
      if (bp < sp || (bp & 7) != 0) return stop(WalkStop::no_rule);
      cfa = bp + 16;
      if (!read_word(stack, bp, &bp) || !read_word(stack, cfa - 8, &ra))
        return stop(WalkStop::read);
      ret_addr = true;
    } else {
      WalkStop why = WalkStop::unsupported;
      uint64_t next_bp = bp;
      const UserRegisters* leaf = out.frames.size() == 1 ? &regs : nullptr;
      if (!frame_by_cfa(stack, rule, pc, sp, bp, leaf, &cfa, &ra, &next_bp, &why)) return stop(why);
      bp = next_bp;
      ret_addr = true;
    }
    if (ra == 0) return stop(WalkStop::unknown_end);  // no caller, but no CFI said so
    pc = ra;
    sp = cfa;
    out.frames.push_back(ra);
  }
}

}  // namespace gp::unwind
