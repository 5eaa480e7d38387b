#pragma once
// walk_stack: unwinds a copy of a thread's user stack (x86-64) with gp's packed unwind tables,
// in user space, by exactly the rules of gp-record's BPF walker (bpf/profile.bpf.c,
// gp_unwind_step): the rule in force at the pc (at pc - 1 for a return address, whose call is
// the instruction before it) says where the CFA is (rsp or rbp plus an offset, the lazy-PLT
// form, a stack pointer saved on the stack, another register in the sampled frame), the return
// address is at CFA - 8 and the caller's rbp at CFA + rbp_offset; an address
// no table covers takes one frame-pointer step; a sigreturn trampoline's frame reloads the
// registers from the ucontext at rsp; the `end` rule (return address undefined) is the
// outermost frame. Memory is read only from the copy: a word outside it ends the walk,
// truncated. Used for samples whose stack was copied before their tables were loaded, and for
// perf.data samples with a stack copy (--call-graph dwarf).
//
// The copy is untrusted (any process's stack): every read is bounds-checked and the walk takes
// at most max_frames frames. Reentrant and thread-safe (the rule source is only read).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gp/unwind/table.h"

namespace gp::unwind {

// The registers the walk starts from: the sampled thread's user registers.
struct UserRegisters {
  uint64_t rip = 0;
  uint64_t rsp = 0;
  uint64_t rbp = 0;
  // All general registers by DWARF number (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15), when
  // `general_known`: a `reg` rule in the sampled frame reads them.
  bool general_known = false;
  std::array<uint64_t, 16> general{};
};

// A copy of user memory: bytes[i] was at address start + i (the stack from rsp up).
struct StackCopy {
  uint64_t start = 0;
  std::span<const uint8_t> bytes;
};

// How a walk ended. Values equal bpf/profile.h's enum gp_stack_end.
enum class WalkEnd : uint8_t {
  unknown = 0,    // a zero frame pointer or return address no CFI called the outermost frame
  complete = 1,   // the outermost frame: its rule said the return address is undefined
  truncated = 2,  // cut (see WalkStop)
};

// Why a walk stopped, one of the BPF walker's counters (bpf/profile.h, enum gp_counter).
enum class WalkStop : uint8_t {
  complete,          // GP_COUNTER_UNWIND_COMPLETE (end complete)
  unknown_end,       // GP_COUNTER_UNWIND_UNKNOWN_END (end unknown)
  depth,             // GP_COUNTER_TRUNC_DEPTH: max_frames frames taken
  read,              // GP_COUNTER_TRUNC_READ: a word outside the copy (unreadable in BPF)
  no_rule,           // GP_COUNTER_TRUNC_NO_RULE: no rule, and rbp is no frame pointer
  unsupported,       // GP_COUNTER_TRUNC_UNSUPPORTED: CFI gp cannot follow
  bad_frame,         // GP_COUNTER_TRUNC_BAD_FRAME: the CFA did not move up the stack
  register_unknown,  // GP_COUNTER_TRUNC_REGISTER: a CFA based on a register whose value is
                     // known in the sampled frame only, met in a caller's frame
};

// "complete", "unknown-end", "depth", "read", "no-rule", "unsupported", "bad-frame", "register".
const char* walk_stop_name(WalkStop stop);
// The end a stop gives: complete, unknown (unknown_end) or truncated (the others).
WalkEnd walk_end_of(WalkStop stop);

struct WalkedStack {
  std::vector<uint64_t> frames;  // leaf first: the sampled pc, then return addresses
  WalkEnd end = WalkEnd::truncated;
  WalkStop stop = WalkStop::depth;
  uint32_t fp_frames = 0;  // frame-pointer steps (no rule covered the pc), as the BPF counts them
  // Of those, the steps at an address no table covers at all (rule_at gave nullopt: no mapping
  // with a table), as opposed to a gap between the FDEs of a mapping that has one. A walk with
  // none used every table it could: loading more tables would not change it.
  uint32_t untabled_frames = 0;
};

// Where the walk finds rules: the rule in force at an address of the process, or nullopt when no
// table covers it (the walk then takes a frame-pointer step).
class RuleSource {
 public:
  virtual ~RuleSource() = default;
  virtual std::optional<PackedRule> rule_at(uint64_t address) const = 0;
};

// One executable mapping of the process and its binary's table: the table's offset of address a
// (start <= a < end) is a - bias (bpf/profile.h: struct gp_unwind_mapping).
struct ModuleTable {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t bias = 0;
  const PackedTable* table = nullptr;  // not owned; must outlive the ModuleTables
};

// A process's mappings with tables, as the BPF maps hold them: an address in none of them, or
// below its mapping's bias, or outside its table's pages, has no rule.
class ModuleTables : public RuleSource {
 public:
  // Mappings may be added in any order; they should not overlap (as in the BPF map, an address
  // is looked up in the mapping with the greatest start at or below it).
  void add(const ModuleTable& module);
  std::optional<PackedRule> rule_at(uint64_t address) const override;
  size_t size() const { return modules_.size(); }

 private:
  std::vector<ModuleTable> modules_;  // sorted by start
};

// The BPF walker's frame cap (GP_MAX_STACK_DEPTH).
inline constexpr uint32_t kMaxWalkFrames = 127;

struct WalkOptions {
  uint32_t max_frames = kMaxWalkFrames;  // frames, the leaf included (at least 1)
};

// Unwinds from regs through the copy with the rules of `rules`.
WalkedStack walk_stack(const UserRegisters& regs, const StackCopy& stack, const RuleSource& rules,
                       const WalkOptions& options = {});

}  // namespace gp::unwind
