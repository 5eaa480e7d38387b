// The evaluation loop's parts past its symbol: found from the near jumps that leave it.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "record/python_eval_parts.h"

namespace gp::test::record {
namespace {

using gp::record::AddressRange;

// rel32 of an instruction of `size` bytes at `at` (link-time) that goes to `to`.
void put_rel32(std::vector<uint8_t>& code, size_t pos, uint64_t at, size_t size, uint64_t to) {
  const auto rel = static_cast<int32_t>(static_cast<int64_t>(to - (at + size)));
  std::memcpy(code.data() + pos + size - 4, &rel, 4);
}

TEST(PythonEvalParts, JumpsOutOfTheFunctionGiveTheLargePartsTheyLandIn) {
  const uint64_t start = 0x598b80;
  std::vector<uint8_t> code(64, 0x90);
  code[0] = 0x0f, code[1] = 0x84;  // je into the cold part's start
  put_rel32(code, 0, start, 6, 0x43fb58);
  code[10] = 0xe9;  // jmp into its middle: the same part, once
  put_rel32(code, 10, start + 10, 5, 0x43fd02);
  code[20] = 0xe9;  // jmp within the function
  put_rel32(code, 20, start + 20, 5, start + 40);
  code[30] = 0xe9;  // jmp to a small function (a tail call)
  put_rel32(code, 30, start + 30, 5, 0x500000);
  code[40] = 0xe9;  // jmp to no FDE at all
  put_rel32(code, 40, start + 40, 5, 0x100);
  std::vector<AddressRange> fdes = {
      {0x43fb58, 0x45451f}, {0x500000, 0x500100}, {start, start + code.size()}};
  auto parts = gp::record::jumped_to_parts(code, start, fdes);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].start, 0x43fb58u);
  EXPECT_EQ(parts[0].end, 0x45451fu);
}

TEST(PythonEvalParts, AnyBytesGiveABoundedAnswer) {
  std::vector<uint8_t> code = {0xe9, 0xff, 0xff, 0xff, 0x7f, 0x0f, 0x8f, 0x00};  // cut short
  std::vector<AddressRange> fdes = {{0x1000, 0x100000}};
  EXPECT_TRUE(gp::record::jumped_to_parts(code, 0x2000, fdes).empty());
  EXPECT_TRUE(gp::record::jumped_to_parts({}, 0x2000, fdes).empty());
}

}  // namespace
}  // namespace gp::test::record
