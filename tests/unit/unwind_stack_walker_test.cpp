// walk_stack: the BPF walker's rules over a copy of a stack. Hand-made tables and stacks check
// each rule (the call's address for a return address, rsp/rbp/plt CFAs, the saved rbp, frame-
// pointer steps, signal frames, the outermost frame) and each way a walk is cut; then this very
// thread's stack, copied, is walked with the tables of the binaries it maps, to _start.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gp/proc/process.h"
#include "gp/unwind/process_tables.h"
#include "gp/unwind/stack_walker.h"

namespace gp::test::unwind {
namespace {

using gp::unwind::ModuleTable;
using gp::unwind::ModuleTables;
using gp::unwind::PackedTable;
using gp::unwind::Row;
using gp::unwind::Rule;
using gp::unwind::StackCopy;
using gp::unwind::Table;
using gp::unwind::UserRegisters;
using gp::unwind::WalkedStack;
using gp::unwind::WalkEnd;
using gp::unwind::WalkStop;

// One module at M: a table with a row every 0x100 bytes of [M, M + 0x800).
constexpr uint64_t M = 0x7f0000001000;
constexpr uint64_t S = 0x7ffd00000000;    // the copied stack's start
constexpr uint64_t kOutside = 0x5000000;  // no module there

PackedTable synthetic_table() {
  Table t;
  t.rows = {
      {0x1000, Rule::rsp, 16, 0},    // M+0x000: a body after one push
      {0x1100, Rule::rbp, 16, -16},  // M+0x100: push rbp; mov rbp, rsp
      {0x1200, Rule::plt, 8, 0},     // M+0x200: a lazy PLT entry
      {0x1300, Rule::signal, 0, 0},  // M+0x300: a sigreturn trampoline
      {0x1400, Rule::end, 0, 0},     // M+0x400: _start
      {0x1500, Rule::unsupported, 0, 0},
      {0x1600, Rule::rsp, 8, 0},  // M+0x600: a function's first instruction
      {0x1700, Rule::none, 0, 0},
  };
  auto packed = gp::unwind::pack(t);
  EXPECT_TRUE(packed) << (packed ? "" : packed.error().message);
  return packed ? *packed : PackedTable{};
}

class StackWalker : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = synthetic_table();
    ASSERT_EQ(table_.base, 0x1000u);
    tables_.add(ModuleTable{M, M + 0x1000, M, &table_});
  }
  // Walks from rip/rsp/rbp through `words` copied at S.
  WalkedStack walk(uint64_t rip, uint64_t rsp, uint64_t rbp, const std::vector<uint64_t>& words,
                   uint32_t max_frames = gp::unwind::kMaxWalkFrames) {
    bytes_.resize(words.size() * 8);
    std::memcpy(bytes_.data(), words.data(), bytes_.size());
    return gp::unwind::walk_stack(UserRegisters{rip, rsp, rbp}, StackCopy{S, bytes_}, tables_,
                                  {max_frames});
  }
  PackedTable table_;
  ModuleTables tables_;
  std::vector<uint8_t> bytes_;
};

TEST_F(StackWalker, LooksUpAReturnAddressAtItsCallAndEndsAtTheOutermostFrame) {
  // M+0x100 starts the rbp row, but its call is at M+0xff: the rsp row unwinds it.
  auto w = walk(M + 0x10, S, 0, {0, M + 0x100, 0, M + 0x401});
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x10, M + 0x100, M + 0x401}));
  EXPECT_EQ(w.end, WalkEnd::complete);
  EXPECT_EQ(w.stop, WalkStop::complete);
  EXPECT_EQ(w.fp_frames, 0u);
}

TEST_F(StackWalker, RestoresTheSavedRbpForTheFramePointerStepOfACallerWithoutTable) {
  // rbp rule: CFA = rbp + 16, rbp saved at CFA - 16. The caller (no module) takes a
  // frame-pointer step from the restored rbp.
  auto w = walk(M + 0x110, S, S + 16, {0, 0, S + 48, kOutside, 0, 0, /*S+48*/ 0, M + 0x401});
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x110, kOutside, M + 0x401}));
  EXPECT_EQ(w.end, WalkEnd::complete);
  EXPECT_EQ(w.fp_frames, 1u);
  EXPECT_EQ(w.untabled_frames, 1u);  // no module covers kOutside
}

TEST_F(StackWalker, AFramePointerStepInAGapOfATableIsNoUntabledFrame) {
  // M+0x700: a `none` row (code between FDEs, as ld.so's entry point), rbp 0: the ABI's end,
  // reached with every table in place.
  auto w = walk(M + 0x710, S, 0, {0});
  EXPECT_EQ(w.end, WalkEnd::unknown);
  EXPECT_EQ(w.fp_frames, 1u);
  EXPECT_EQ(w.untabled_frames, 0u);
  // The same at an address no table covers.
  w = walk(kOutside, S, 0, {0});
  EXPECT_EQ(w.end, WalkEnd::unknown);
  EXPECT_EQ(w.untabled_frames, 1u);
}

TEST_F(StackWalker, APltEntryAddsEightFromItsEleventhByte) {
  std::vector<uint64_t> words{M + 0x401, M + 0x402};
  EXPECT_EQ(walk(M + 0x205, S, 0, words).frames[1], M + 0x401);
  EXPECT_EQ(walk(M + 0x20b, S, 0, words).frames[1], M + 0x402);
}

TEST_F(StackWalker, TakesTheInterruptedRegistersFromASignalFrame) {
  // The handler's return address is the trampoline's (its call at M+0x300, the signal row); the
  // ucontext follows it. The interrupted pc is no return address: M+0x400 itself is looked up.
  std::vector<uint64_t> words(40, 0);
  words[0] = M + 0x301;
  const uint64_t uc = 8 / 8;       // the ucontext at S + 8
  words[uc + 5 + 10] = 0;          // rbp
  words[uc + 5 + 15] = S + 0x100;  // rsp
  words[uc + 5 + 16] = M + 0x400;  // rip
  auto w = walk(M + 0x600, S, 0, words);
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x600, M + 0x301, M + 0x400}));
  EXPECT_EQ(w.end, WalkEnd::complete);
  // Cut before the ucontext's rip: truncated, never a guess.
  words.resize(uc + 5 + 16);
  auto cut = walk(M + 0x600, S, 0, words);
  EXPECT_EQ(cut.end, WalkEnd::truncated);
  EXPECT_EQ(cut.stop, WalkStop::read);
  EXPECT_EQ(cut.frames.size(), 2u);
}

TEST_F(StackWalker, AWordPastTheCopyTruncates) {
  auto w = walk(M + 0x10, S, 0, {0, M + 0x100, 0});  // the second return address is not copied
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x10, M + 0x100}));
  EXPECT_EQ(w.end, WalkEnd::truncated);
  EXPECT_EQ(w.stop, WalkStop::read);
  // A stack pointer below the copy.
  auto below = walk(M + 0x10, S - 64, 0, {0, M + 0x100, 0, M + 0x401});
  EXPECT_EQ(below.stop, WalkStop::read);
  EXPECT_EQ(below.frames.size(), 1u);
}

TEST_F(StackWalker, GarbageRegistersTruncateOrEndUnknownNeverComplete) {
  // A CFA that does not move up the stack.
  auto bad = walk(M + 0x110, S, S - 64, {0, 0, 0, 0});
  EXPECT_EQ(bad.stop, WalkStop::bad_frame);
  EXPECT_EQ(bad.end, WalkEnd::truncated);
  EXPECT_EQ(walk(M + 0x510, S, 0, {0, 0}).stop, WalkStop::unsupported);
  // No rule: a misaligned or low rbp is no frame pointer; a zero one is an unknown end.
  EXPECT_EQ(walk(kOutside, S, 3, {0, 0}).stop, WalkStop::no_rule);
  EXPECT_EQ(walk(kOutside, S + 64, S, {0, 0}).stop, WalkStop::no_rule);
  auto zero = walk(kOutside, S, 0, {0, 0});
  EXPECT_EQ(zero.stop, WalkStop::unknown_end);
  EXPECT_EQ(zero.end, WalkEnd::unknown);
  // A zero return address that no CFI called the end.
  EXPECT_EQ(walk(M + 0x10, S, 0, {0, 0}).end, WalkEnd::unknown);
  // A pointer far past the copy.
  EXPECT_EQ(walk(kOutside, S, ~uint64_t{7}, {0, 0}).stop, WalkStop::read);
}

TEST_F(StackWalker, StopsAtTheFrameCap) {
  // Recursion: every frame returns to M+0x100, unwound by the rsp row (16-byte frames).
  std::vector<uint64_t> words;
  for (int i = 0; i < 400; ++i) words.insert(words.end(), {0, M + 0x100});
  auto w = walk(M + 0x10, S, 0, words);
  EXPECT_EQ(w.frames.size(), gp::unwind::kMaxWalkFrames);
  EXPECT_EQ(w.stop, WalkStop::depth);
  EXPECT_EQ(w.end, WalkEnd::truncated);
  EXPECT_EQ(walk(M + 0x10, S, 0, words, 5).frames.size(), 5u);
  // The cap counts frames before the end rule is looked at, as the BPF walk does.
  EXPECT_EQ(walk(M + 0x10, S, 0, {0, M + 0x100, 0, M + 0x401}, 3).stop, WalkStop::depth);
}

TEST(StackWalkerDeref, LoadsTheCfaFromASavedStackPointer) {
  // OpenSSL's realigned frames: CFA = *(rsp + 16) + 8, rbp saved at CFA - 24; and the red-zone
  // form CFA = *(rsp - 8) + 8.
  Table t;
  t.rows = {{0x1000, Rule::deref_rsp, 16, -24, 8},
            {0x1080, Rule::deref_rsp, -8, 0, 8},
            {0x1100, Rule::end, 0, 0},
            {0x1200, Rule::none, 0, 0}};
  auto packed = gp::unwind::pack(t);
  ASSERT_TRUE(packed) << packed.error().message;
  const gp::unwind::PackedRule* rule = gp::unwind::packed_rule_at(*packed, 0x1010);
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->kind & gp::unwind::kKindMask, static_cast<uint8_t>(Rule::deref_rsp));
  EXPECT_EQ(rule->kind >> gp::unwind::kAddShift, 1);
  EXPECT_EQ(static_cast<int16_t>(packed_rule_at(*packed, 0x1090)->cfa_offset), -8);
  ModuleTables tables;
  tables.add(ModuleTable{M, M + 0x1000, M, &*packed});
  std::vector<uint64_t> words{0, 0, S + 64, 0, 0, 0, /*S+48: rbp*/ 0x1234, 0, M + 0x101};
  std::vector<uint8_t> bytes(words.size() * 8);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  auto w = gp::unwind::walk_stack(UserRegisters{M + 0x10, S, 0}, StackCopy{S, bytes}, tables);
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x10, M + 0x101}));
  EXPECT_EQ(w.end, WalkEnd::complete);
  // The red-zone slot at S + 8 - 8 holds S + 64: CFA S + 72, return address M + 0x101.
  words[0] = S + 64;
  std::memcpy(bytes.data(), words.data(), bytes.size());
  w = gp::unwind::walk_stack(UserRegisters{M + 0x90, S + 8, 0}, StackCopy{S, bytes}, tables);
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x90, M + 0x101}));
  EXPECT_EQ(w.end, WalkEnd::complete);
  // A saved stack pointer below sp: the CFA does not move up the stack.
  words[2] = S - 64;
  std::memcpy(bytes.data(), words.data(), bytes.size());
  EXPECT_EQ(gp::unwind::walk_stack(UserRegisters{M + 0x10, S, 0}, StackCopy{S, bytes}, tables).stop,
            WalkStop::bad_frame);
  // The slot outside the copy: truncated.
  EXPECT_EQ(
      gp::unwind::walk_stack(UserRegisters{M + 0x10, S + 0x1000, 0}, StackCopy{S, bytes}, tables)
          .stop,
      WalkStop::read);
}

TEST(StackWalkerRegister, TakesACfaFromAnotherRegisterInTheSampledFrameOnly) {
  // ld.so's lazy binder: CFA = rbx + 16 (DWARF 3), rbx saved at CFA - 16. A caller whose CFA is
  // rax-based (DWARF 0) cannot be unwound: its rax is whatever its callee left.
  Table t;
  t.rows = {{0x1000, Rule::reg, 16, 0, 0, 3},
            {0x1080, Rule::reg, 8, 0, 0, 0},
            {0x1100, Rule::end, 0, 0},
            {0x1180, Rule::rsp, 8, 0},
            {0x1200, Rule::none, 0, 0}};
  auto packed = gp::unwind::pack(t);
  ASSERT_TRUE(packed) << packed.error().message;
  EXPECT_EQ(packed_rule_at(*packed, 0x1010)->kind,
            static_cast<uint8_t>(Rule::reg) | 3 << gp::unwind::kAddShift);
  ModuleTables tables;
  tables.add(ModuleTable{M, M + 0x1000, M, &*packed});
  // rsp realigned below the frame: S; rbx = S + 48, so the CFA is S + 64, the return address
  // at S + 56.
  std::vector<uint64_t> words{0, 0, 0, 0, 0, 0, 0, M + 0x101};
  std::vector<uint8_t> bytes(words.size() * 8);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  UserRegisters regs{M + 0x10, S, 0};
  regs.general_known = true;
  regs.general[3] = S + 48;
  auto w = gp::unwind::walk_stack(regs, StackCopy{S, bytes}, tables);
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x10, M + 0x101}));
  EXPECT_EQ(w.end, WalkEnd::complete);
  // Without the sample's registers: cut, with the reason.
  regs.general_known = false;
  w = gp::unwind::walk_stack(regs, StackCopy{S, bytes}, tables);
  EXPECT_EQ(w.stop, WalkStop::register_unknown);
  EXPECT_EQ(w.end, WalkEnd::truncated);
  EXPECT_STREQ(gp::unwind::walk_stop_name(w.stop), "register");
  // A caller's rax-based frame: cut, however the registers were sampled.
  regs = UserRegisters{M + 0x190, S, 0};
  regs.general_known = true;
  regs.general[0] = S + 48;
  words[0] = M + 0x90;  // the leaf (rsp + 8) returns into the rax-based frame
  std::memcpy(bytes.data(), words.data(), bytes.size());
  w = gp::unwind::walk_stack(regs, StackCopy{S, bytes}, tables);
  EXPECT_EQ(w.frames, (std::vector<uint64_t>{M + 0x190, M + 0x90}));
  EXPECT_EQ(w.stop, WalkStop::register_unknown);
}

TEST(ModuleTables, FindsTheMappingAndRowOfAnAddress) {
  PackedTable table = synthetic_table();
  ModuleTables tables;
  // Added out of order; the second maps the same table 1 MiB higher.
  tables.add(ModuleTable{M + 0x100000, M + 0x101000, M + 0x100000, &table});
  tables.add(ModuleTable{M, M + 0x1000, M, &table});
  EXPECT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables.rule_at(M + 0x150)->kind, static_cast<uint8_t>(Rule::rbp));
  EXPECT_EQ(tables.rule_at(M + 0x100450)->kind, static_cast<uint8_t>(Rule::end));
  EXPECT_EQ(tables.rule_at(M + 0x1ff)->cfa_offset, 16);
  EXPECT_FALSE(tables.rule_at(M - 1));            // before every mapping
  EXPECT_FALSE(tables.rule_at(M + 0x1000));       // between them
  EXPECT_FALSE(tables.rule_at(M + 0x101000));     // past the last
  EXPECT_EQ(tables.rule_at(M + 0x750)->kind, 0);  // the table's last row: none
  // A mapping whose bias puts its addresses past the table's pages.
  ModuleTables far;
  far.add(ModuleTable{M, M + 0x10000, M - 0x8000, &table});
  EXPECT_FALSE(far.rule_at(M + 0x10));
}

// This thread's registers at one point of `capture` and a copy of its stack from there up.
struct OwnStack {
  UserRegisters regs;
  uint64_t caller = 0;  // capture's return address
  std::vector<uint8_t> bytes;
};

uint64_t stack_end() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[stack]") == std::string::npos) continue;
    std::istringstream in(line);
    uint64_t lo = 0, hi = 0;
    char dash = 0;
    in >> std::hex >> lo >> dash >> hi;
    return hi;
  }
  return 0;
}

__attribute__((noinline)) void capture(OwnStack* out, uint64_t end) {
  uint64_t rip = 0, rsp = 0, rbp = 0;
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
               : "=r"(rip), "=r"(rsp), "=r"(rbp));
  out->regs = UserRegisters{rip, rsp, rbp};
  out->caller = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  const uint64_t size = std::min<uint64_t>(end - rsp, 1 << 20);
  out->bytes.resize(size);
  std::memcpy(out->bytes.data(), reinterpret_cast<const void*>(rsp), size);
}

TEST(StackWalkerOnThisThread, UnwindsACopyOfItsOwnStackToTheOutermostFrame) {
  const uint64_t end = stack_end();
  ASSERT_NE(end, 0u);
  OwnStack own;
  capture(&own, end);
  ASSERT_GT(own.bytes.size(), 0u);
  // The tables of every binary this process maps, as gp-record would load them.
  proc::SnapshotOptions options;
  proc::BuildIdCache cache;
  auto maps = proc::executable_mappings(getpid(), options, &cache);
  ASSERT_TRUE(maps) << maps.error().message;
  std::vector<std::unique_ptr<gp::unwind::LoadedBinary>> binaries;
  ModuleTables tables;
  for (const auto& m : *maps) {
    if (m.kind != model::MappingKind::user || m.path.empty() || m.path[0] != '/') continue;
    int fd = ::open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    auto binary = gp::unwind::load_binary(fd);
    ::close(fd);
    if (!binary) continue;
    uint64_t bias = 0;
    if (!gp::unwind::mapping_bias(binary->segments, binary->table.base, m.start, m.file_offset,
                                  &bias))
      continue;
    binaries.push_back(std::make_unique<gp::unwind::LoadedBinary>(std::move(*binary)));
    tables.add(ModuleTable{m.start, m.end, bias, &binaries.back()->table});
  }
  ASSERT_GT(tables.size(), 0u);
  auto w = gp::unwind::walk_stack(own.regs, StackCopy{own.regs.rsp, own.bytes}, tables);
  ASSERT_GE(w.frames.size(), 4u);
  EXPECT_EQ(w.frames[0], own.regs.rip);
  EXPECT_EQ(w.frames[1], own.caller);
  EXPECT_EQ(w.end, WalkEnd::complete)
      << gp::unwind::walk_stop_name(w.stop) << " after " << w.frames.size() << " frames";
  // The same copy cut to its first 256 bytes: truncated, with the frames it holds.
  auto cut = gp::unwind::walk_stack(
      own.regs,
      StackCopy{own.regs.rsp, std::span(own.bytes).first(std::min<size_t>(256, own.bytes.size()))},
      tables);
  EXPECT_EQ(cut.end, WalkEnd::truncated);
  EXPECT_EQ(cut.stop, WalkStop::read);
  ASSERT_LE(cut.frames.size(), w.frames.size());
  for (size_t i = 0; i < cut.frames.size(); ++i) EXPECT_EQ(cut.frames[i], w.frames[i]);
}

}  // namespace
}  // namespace gp::test::unwind
