#pragma once
// Line numbers of Ruby frames, as CRuby computes them for Thread#backtrace_locations: the
// instruction index of the frame's pc (the pc points past the current instruction, so one
// less, unless it is 0), then the insns_info entry whose start position is the last one at or
// before that index. CRuby keeps the start positions either as a plain array (`positions`) or,
// once an iseq is finished, as a succinct bit vector (iseq.c's struct succ_index_table:
// 54 positions packed as 7-bit ranks in six words, then blocks of 512 positions each with a
// 32-bit rank, seven 9-bit sub-block ranks and 8 words of bits). Pure functions over bytes read
// from the target: no I/O, safe on garbage (bounded, never reads past what they are given).

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gp::runtime::ruby {

// The instruction index CRuby looks up for a frame: pc - iseq_encoded in VALUEs, minus one when
// positive. nullopt when pc is outside [iseq_encoded, iseq_encoded + iseq_size].
std::optional<uint32_t> instruction_index(uint64_t pc, uint64_t iseq_encoded, uint32_t iseq_size);

// Index into insns_info of the entry covering instruction `pos`, from the plain positions
// array (ascending start positions). nullopt when positions is empty.
std::optional<uint32_t> insn_info_from_positions(std::span<const uint32_t> positions, uint32_t pos);

// Bytes of a succinct table built for an iseq of iseq_size VALUEs (what to read).
size_t succ_table_bytes(uint32_t iseq_size);

// Index into insns_info of the entry covering `pos`, from a succinct table's bytes (the rank of
// pos minus one). nullopt when the table is too short for pos or the rank is 0.
std::optional<uint32_t> insn_info_from_succ_table(std::string_view table, uint32_t pos);

}  // namespace gp::runtime::ruby
