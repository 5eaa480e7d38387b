// SessionBuilder::address_locations: a call chain interned at once gets the ids, locations and
// new-location flags that address_location gives frame by frame.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gp/model/builder.h"

namespace gp::test::model {
namespace {

using gp::model::FrameKind;
using gp::model::Session;
using gp::model::SessionBuilder;

TEST(SessionBuilderChain, GivesTheIdsAndLocationsOfOneByOneInterning) {
  // A chain longer than one batch, with repeats inside it and across chains, the same address
  // as a return address and not, and frames without a mapping.
  Session one, many;
  SessionBuilder b1(one), b2(many);
  for (SessionBuilder* b : {&b1, &b2})
    b->mapping({.pid = 7, .start = 0x400000, .end = 0x500000, .file_offset = 0x1000, .path = "/x"});
  std::vector<SessionBuilder::AddressFrame> chain;
  for (int i = 0; i < 70; ++i)
    chain.push_back({static_cast<uint64_t>(i % 3 == 0 ? 0 : 1), 0x401000 + 16 * (i % 40),
                     i % 5 == 0 ? FrameKind::kernel : FrameKind::native, i % 2 == 1});
  for (int round = 0; round < 2; ++round) {
    std::vector<uint64_t> expected, got;
    std::vector<uint8_t> fresh;
    size_t before = one.locations.size();
    for (const auto& f : chain)
      expected.push_back(b1.address_location(f.mapping_id, f.address, f.kind, f.is_return_address));
    b2.address_locations(chain, got, &fresh);
    EXPECT_EQ(got, expected);
    ASSERT_EQ(fresh.size(), chain.size());
    size_t new_count = 0;
    for (uint8_t f : fresh) new_count += f;
    EXPECT_EQ(new_count, one.locations.size() - before);  // none the second time
  }
  ASSERT_EQ(many.locations.size(), one.locations.size());
  for (size_t i = 0; i < one.locations.size(); ++i) {
    const auto& a = one.locations[i];
    const auto& b = many.locations[i];
    EXPECT_EQ(a.mapping_id, b.mapping_id);
    EXPECT_EQ(a.address, b.address);
    EXPECT_EQ(a.file_offset, b.file_offset);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.is_return_address, b.is_return_address);
  }
}

}  // namespace
}  // namespace gp::test::model
