// Ruby line-number lookups (see line_numbers.h).
#include "runtime/ruby/line_numbers.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace gp::runtime::ruby {
namespace {

constexpr uint32_t kImmediatePositions = 54;  // IMMEDIATE_TABLE_SIZE
constexpr size_t kImmediateBytes = 6 * 8;     // uint64_t imm_part[54 / 9]
constexpr size_t kBlockBytes = 80;            // struct succ_dict_block
constexpr uint32_t kBlockPositions = 512;

uint64_t word_at(std::string_view bytes, size_t offset) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

}  // namespace

std::optional<uint32_t> instruction_index(uint64_t pc, uint64_t iseq_encoded, uint32_t iseq_size) {
  if (pc < iseq_encoded || (pc - iseq_encoded) % 8 != 0) return std::nullopt;
  uint64_t n = (pc - iseq_encoded) / 8;
  if (n > iseq_size) return std::nullopt;
  return static_cast<uint32_t>(n > 0 ? n - 1 : 0);
}

std::optional<uint32_t> insn_info_from_positions(std::span<const uint32_t> positions,
                                                 uint32_t pos) {
  if (positions.empty()) return std::nullopt;
  // The last entry starting at or before pos (the first entry when none does).
  auto it = std::upper_bound(positions.begin(), positions.end(), pos);
  if (it == positions.begin()) return 0;
  return static_cast<uint32_t>(it - positions.begin() - 1);
}

size_t succ_table_bytes(uint32_t iseq_size) {
  size_t blocks =
      iseq_size < kImmediatePositions ? 0 : (iseq_size - kImmediatePositions + 511) / 512;
  return kImmediateBytes + blocks * kBlockBytes;
}

std::optional<uint32_t> insn_info_from_succ_table(std::string_view table, uint32_t pos) {
  uint32_t rank = 0;
  if (pos < kImmediatePositions) {
    if (table.size() < kImmediateBytes) return std::nullopt;
    uint64_t word = word_at(table, (pos / 9) * 8);
    rank = static_cast<uint32_t>(word >> ((pos % 9) * 7)) & 0x7f;
  } else {
    uint32_t x = pos - kImmediatePositions;
    size_t block = kImmediateBytes + (x / kBlockPositions) * kBlockBytes;
    if (table.size() < block + kBlockBytes) return std::nullopt;
    uint32_t bit = x % kBlockPositions;
    uint32_t small = bit / 64;
    uint32_t block_rank = 0;
    std::memcpy(&block_rank, table.data() + block, sizeof block_rank);
    uint64_t small_ranks = word_at(table, block + 8);
    uint32_t small_rank =
        small == 0 ? 0 : static_cast<uint32_t>(small_ranks >> ((small - 1) * 9)) & 0x1ff;
    uint64_t bits = word_at(table, block + 16 + small * 8);
    uint32_t below = static_cast<uint32_t>(std::popcount(bits << (63 - bit % 64)));
    rank = block_rank + small_rank + below;
  }
  if (rank == 0) return std::nullopt;
  return rank - 1;
}

}  // namespace gp::runtime::ruby
