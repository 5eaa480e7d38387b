// The pure parts of gp's Ruby sampler: version parsing, which versions have a layout, and the
// line-number lookups (pc -> instruction index -> insns_info entry) over both of CRuby's
// position encodings. The succinct tables here are built the way iseq.c builds them
// (succ_index_table_create), and every lookup is checked against a plain scan of the positions.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>

#include "runtime/ruby/line_numbers.h"
#include "runtime/ruby/ruby_layout.h"

namespace gp::runtime::ruby {
namespace {

TEST(RuntimeRubyLayout, ParsesRubyVersion) {
  auto v = parse_ruby_version("3.1.2");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 3);
  EXPECT_EQ(v->minor, 1);
  EXPECT_EQ(v->teeny, 2);
  EXPECT_EQ(v->text(), "3.1.2");
  EXPECT_FALSE(parse_ruby_version("3.1"));
  EXPECT_FALSE(parse_ruby_version("3.1.2p20"));
  EXPECT_FALSE(parse_ruby_version(""));
  EXPECT_FALSE(parse_ruby_version("x.y.z"));
}

TEST(RuntimeRubyLayout, OnlyVersionsWithATableHaveALayout) {
  for (int teeny : {0, 2, 7}) EXPECT_TRUE(layout_for_version({3, 1, teeny}));
  EXPECT_TRUE(layout_for_version({2, 7, 4}));
  EXPECT_TRUE(layout_for_version({3, 3, 8}));
  EXPECT_TRUE(layout_for_version({3, 4, 1}));
  EXPECT_FALSE(layout_for_version({3, 0, 6}));
  EXPECT_FALSE(layout_for_version({3, 2, 0}));
  EXPECT_FALSE(layout_for_version({2, 6, 10}));
  EXPECT_FALSE(layout_for_version({3, 5, 0}));
  EXPECT_EQ(supported_versions(), "2.7, 3.1, 3.3, 3.4");
}

TEST(RuntimeRubyLayout, EveryTableIsConsistent) {
  for (auto [major, minor] : {std::pair{2, 7}, {3, 1}, {3, 3}, {3, 4}}) {
    SCOPED_TRACE(std::to_string(major) + "." + std::to_string(minor));
    auto l = *layout_for_version({major, minor, 0});
    EXPECT_EQ(l.major, major);
    EXPECT_EQ(l.minor, minor);
    // The body read covers every body field read from it.
    for (uint32_t field :
         {l.body_iseq_size, l.body_iseq_encoded, l.body_pathobj, l.body_label, l.body_first_lineno,
          l.body_insns_body, l.body_insns_positions, l.body_insns_size, l.body_insns_succ_table})
      EXPECT_LE(field + 4, l.body_read_size);
    EXPECT_GE(l.cfp_size, l.cfp_ep + 8);
    EXPECT_FALSE(l.known_ids.empty());
    // Where the threads are: the main ractor's (3.0+) or the VM's own list; a tid to read.
    EXPECT_NE(l.threads_head, 0u);
    EXPECT_EQ(major >= 3, l.vm_main_ractor != 0);
    EXPECT_EQ(major >= 3, l.running_ec != 0);
    EXPECT_TRUE(l.thread_tid != 0 || l.thread_pthread != 0);
  }
}

TEST(RuntimeRubyLines, InstructionIndexIsThePcMinusOne) {
  const uint64_t base = 0x1000;
  EXPECT_EQ(instruction_index(base, base, 10), 0u);       // not started: index 0
  EXPECT_EQ(instruction_index(base + 8, base, 10), 0u);   // past the first instruction
  EXPECT_EQ(instruction_index(base + 80, base, 10), 9u);  // at the end
  EXPECT_FALSE(instruction_index(base + 88, base, 10));   // beyond the iseq
  EXPECT_FALSE(instruction_index(base - 8, base, 10));
  EXPECT_FALSE(instruction_index(base + 4, base, 10));  // not a VALUE boundary
}

TEST(RuntimeRubyLines, PositionsPickTheLastEntryStartingAtOrBefore) {
  const std::vector<uint32_t> positions = {0, 3, 7, 12};
  EXPECT_EQ(insn_info_from_positions(positions, 0), 0u);
  EXPECT_EQ(insn_info_from_positions(positions, 2), 0u);
  EXPECT_EQ(insn_info_from_positions(positions, 3), 1u);
  EXPECT_EQ(insn_info_from_positions(positions, 11), 2u);
  EXPECT_EQ(insn_info_from_positions(positions, 500), 3u);
  EXPECT_FALSE(insn_info_from_positions({}, 0));
}

// iseq.c's succ_index_table_create for positions `data` of an iseq of max_pos instructions.
std::string build_succ_table(uint32_t max_pos, const std::vector<uint32_t>& data) {
  const uint32_t imm = 54;
  const uint32_t imm_size = (max_pos < imm ? max_pos + 8 : imm) / 9;
  const uint32_t succ_size = (max_pos < imm ? 0 : (max_pos - imm + 511)) / 512;
  std::string out(48 + succ_size * 80, '\0');
  size_t r = 0;
  for (uint32_t j = 0; j < imm_size; ++j) {
    uint64_t word = 0;
    for (uint32_t i = 0; i < 9; ++i) {
      if (r < data.size() && data[r] == j * 9 + i) ++r;
      word |= uint64_t(r) << (7 * i);
    }
    std::memcpy(out.data() + j * 8, &word, 8);
  }
  for (uint32_t k = 0; k < succ_size; ++k) {
    char* block = out.data() + 48 + k * 80;
    uint32_t rank = static_cast<uint32_t>(r);
    std::memcpy(block, &rank, 4);
    uint64_t small_ranks = 0;
    uint32_t small_rank = 0;
    for (uint32_t j = 0; j < 8; ++j) {
      uint64_t bits = 0;
      if (j) small_ranks |= uint64_t(small_rank) << (9 * (j - 1));
      for (uint32_t i = 0; i < 64; ++i) {
        if (r < data.size() && data[r] == k * 512 + j * 64 + i + imm) {
          bits |= uint64_t{1} << i;
          ++r;
        }
      }
      std::memcpy(block + 16 + j * 8, &bits, 8);
      small_rank += static_cast<uint32_t>(std::popcount(bits));
    }
    std::memcpy(block + 8, &small_ranks, 8);
  }
  return out;
}

TEST(RuntimeRubyLines, SuccinctTableAgreesWithThePositions) {
  std::mt19937 rng(28);
  for (uint32_t iseq_size : {1u, 5u, 53u, 54u, 55u, 120u, 600u, 1500u, 5000u}) {
    SCOPED_TRACE(iseq_size);
    // Entries start at 0 and at a random subset of the later instructions.
    std::vector<uint32_t> positions = {0};
    for (uint32_t p = 1; p < iseq_size; ++p) {
      if (rng() % 3 == 0) positions.push_back(p);
    }
    std::string table = build_succ_table(iseq_size, positions);
    EXPECT_EQ(table.size(), succ_table_bytes(iseq_size));
    for (uint32_t pos = 0; pos < iseq_size; ++pos) {
      auto want = insn_info_from_positions(positions, pos);
      auto got = insn_info_from_succ_table(table, pos);
      ASSERT_TRUE(got) << pos;
      ASSERT_EQ(*got, *want) << pos;
    }
  }
}

TEST(RuntimeRubyLines, SuccinctTableNeverReadsPastWhatItIsGiven) {
  std::string table = build_succ_table(600, {0, 100, 599});
  EXPECT_FALSE(insn_info_from_succ_table(std::string_view(table).substr(0, 40), 3));
  EXPECT_FALSE(insn_info_from_succ_table(std::string_view(table).substr(0, 100), 580));
  EXPECT_FALSE(insn_info_from_succ_table(table, 5000));  // beyond the table
  std::string zeros(48, '\0');
  EXPECT_FALSE(insn_info_from_succ_table(zeros, 0));  // rank 0: no entry
}

}  // namespace
}  // namespace gp::runtime::ruby
