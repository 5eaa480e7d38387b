// --call-graph dwarf samples walked with gp's tables (see perf_data_unwind.h).

#include "import/perf_data_unwind.h"

#include <bit>

#include "gp/unwind/process_tables.h"
#include "import/perf_bytes.h"

namespace gp::import {
namespace {

constexpr uint64_t kSampleRegsUser = 1ULL << 12;
constexpr uint64_t kSampleStackUser = 1ULL << 13;
// PERF_SAMPLE_REGS_ABI_64, and x86-64's register numbers (arch/x86/include/uapi/asm/perf_regs.h).
constexpr uint64_t kRegsAbi64 = 2;
constexpr unsigned kRegBp = 6, kRegSp = 7, kRegIp = 8;
// Frames a walk takes at most: the copy bounds it first (perf copies 8 KiB by default, 64 KiB at
// most), this only bounds a copy of tiny frames.
constexpr uint32_t kMaxFrames = 1024;

// Register `reg` of the sample: the values come in the order of the mask's bits.
uint64_t user_register(const PerfAttr& attr, const PerfSample& s, unsigned reg) {
  const uint64_t below = attr.sample_regs_user & ((uint64_t{1} << reg) - 1);
  const size_t at = static_cast<size_t>(std::popcount(below)) * 8;
  return at + 8 <= s.regs_user.size() ? load_at<uint64_t>(s.regs_user, at) : 0;
}

// Files and the vDSO have tables; anonymous memory (JIT code), [vsyscall] and the like do not.
bool is_binary(const std::string& path) {
  return (path.size() > 1 && path[0] == '/' && path[1] != '/') || path == "[vdso]";
}

}  // namespace

// The rules of one address space for walk_stack: the rule in force at an address of a region
// with a table, as the BPF walker finds it (unwind::packed_rule_at).
class PerfStackUnwinder::Rules final : public unwind::RuleSource {
 public:
  Rules(PerfStackUnwinder& owner, PerfAddressSpace* space, bool* met_missing)
      : owner_(owner), space_(space), met_missing_(met_missing) {}

  std::optional<unwind::PackedRule> rule_at(uint64_t address) const override {
    if (space_ == nullptr) return std::nullopt;
    uint64_t start = 0;
    PerfRegion* r = space_->find(address, start);
    if (r == nullptr) return std::nullopt;
    if (!r->table_looked_up) owner_.resolve(start, *r);
    if (r->table == nullptr) {
      if (is_binary(r->path)) *met_missing_ = true;
      return std::nullopt;
    }
    if (address < r->table_bias) return std::nullopt;
    const unwind::PackedTable& t = r->table->table;
    const unwind::PackedRule* rule = unwind::packed_rule_at(t, address - r->table_bias + t.base);
    if (rule == nullptr) return std::nullopt;
    return *rule;
  }

 private:
  PerfStackUnwinder& owner_;
  PerfAddressSpace* space_;
  bool* met_missing_;
};

bool PerfStackUnwinder::wants(const PerfAttr& attr) {
  constexpr uint64_t kNeeded = (1ULL << kRegSp) | (1ULL << kRegIp);
  return (attr.sample_type & kSampleRegsUser) && (attr.sample_type & kSampleStackUser) &&
         (attr.sample_regs_user & kNeeded) == kNeeded;
}

void PerfStackUnwinder::resolve(uint64_t start, PerfRegion& region) {
  region.table_looked_up = true;
  region.table = nullptr;
  if (tables_ == nullptr || !is_binary(region.path)) return;
  const PerfBinaryTable& found =
      tables_->find(PerfBinaryQuery{region.path, region.build_id, region.dev, region.inode});
  const unwind::LoadedBinary* binary = found.binary;
  std::string why = found.why;
  // The region's archive mapping (made when a frame is interned, after the walk) carries the
  // build-id of the very file that was mapped.
  if (region.build_id.empty()) region.build_id = found.build_id;
  if (binary != nullptr &&
      !unwind::mapping_bias(binary->segments, binary->table.base, start, region.pgoff,
                            &region.table_bias)) {
    binary = nullptr;
    why = "no segment of it holds file offset " + std::to_string(region.pgoff);
  }
  region.table = binary;
  if (binary != nullptr) return;
  if (missing_seen_.insert(region.path + '\0' + region.build_id).second) {
    ++missing_count_;
    if (missing_.size() < kMaxMissing) missing_.emplace_back(region.path, why);
  }
}

bool PerfStackUnwinder::unwind(const PerfAttr& attr, const PerfSample& sample,
                               PerfAddressSpace* space, PerfWalk& out) {
  if (sample.regs_abi != kRegsAbi64 || sample.regs_user.empty()) return false;
  unwind::UserRegisters regs;
  regs.rip = user_register(attr, sample, kRegIp);
  regs.rsp = user_register(attr, sample, kRegSp);
  regs.rbp = (attr.sample_regs_user >> kRegBp) & 1 ? user_register(attr, sample, kRegBp) : 0;
  // The copy starts at the user stack pointer (the kernel copies from sp up).
  const unwind::StackCopy copy{regs.rsp, sample.stack_user};
  out.met_missing = false;
  Rules rules(*this, space, &out.met_missing);
  out.stack = unwind::walk_stack(regs, copy, rules, unwind::WalkOptions{kMaxFrames});
  switch (out.stack.end) {
    case unwind::WalkEnd::complete:
      out.end = model::StackEnd::complete;
      break;
    case unwind::WalkEnd::unknown:
      // A zero return address or frame pointer ends a frame-pointer chain, as with gp-record's
      // tables. Where tables were missing, after the leaf alone it says nothing (code without
      // frame pointers leaves rbp at 0 or at anything), as for gp-record's copies without tables.
      out.end = out.stack.frames.size() < 2 && (tables_ == nullptr || out.met_missing)
                    ? model::StackEnd::truncated
                    : model::StackEnd::unknown;
      break;
    case unwind::WalkEnd::truncated:
      out.end = model::StackEnd::truncated;
      break;
  }
  return true;
}

}  // namespace gp::import
