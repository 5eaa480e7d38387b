// Python frames in gp-record's native stacks: the BPF program's encoding taken apart, and each
// evaluation loop's Python frames put next to it.
#include <gtest/gtest.h>

#include <vector>

#include "gp/record/python_frames.h"

namespace gp::test::record {
namespace {

using gp::record::AddressRange;
using gp::record::PyFrameRef;
using gp::record::SplicedFrame;

uint64_t py(uint64_t code, uint64_t offset, bool entry) {
  return gp::record::kPyFrame | (entry ? gp::record::kPyEntry : 0) |
         offset << gp::record::kPyOffsetShift | code;
}

uint64_t marker(uint64_t count, uint64_t flags = 0) {
  return gp::record::kPyMarker | flags | count;
}

TEST(PythonFrames, SplitsNativeAndPythonFrames) {
  std::vector<uint64_t> ips = {0x401000, 0x402000, marker(2), py(0x7f0000001000, 12, false),
                               py(0x7f0000002000, gp::record::kPyOffsetUnknown, true)};
  auto parts = gp::record::split_python_frames(ips);
  EXPECT_EQ(parts.native, 2u);
  ASSERT_EQ(parts.frames.size(), 2u);
  EXPECT_EQ(parts.frames[0], (PyFrameRef{0x7f0000001000, 12, true, false}));
  EXPECT_EQ(parts.frames[1], (PyFrameRef{0x7f0000002000, 0x7fff, false, true}));
  EXPECT_FALSE(parts.cut);
}

TEST(PythonFrames, StackWithoutMarkerIsAllNative) {
  std::vector<uint64_t> ips = {0x401000, 0x402000, 0x403000};
  auto parts = gp::record::split_python_frames(ips);
  EXPECT_EQ(parts.native, 3u);
  EXPECT_TRUE(parts.frames.empty());
}

TEST(PythonFrames, MarkerWhoseCountDisagreesIsNotTaken) {
  // A count of 3 with 2 entries after it: not a marker the program wrote.
  std::vector<uint64_t> ips = {0x401000, marker(3), py(0x1000, 1, true), py(0x2000, 1, true)};
  auto parts = gp::record::split_python_frames(ips);
  EXPECT_EQ(parts.native, ips.size());
  EXPECT_TRUE(parts.frames.empty());
}

TEST(PythonFrames, CutChainIsFlagged) {
  std::vector<uint64_t> ips = {0x401000, marker(1, gp::record::kPyCut), py(0x1000, 1, false)};
  auto parts = gp::record::split_python_frames(ips);
  EXPECT_TRUE(parts.cut);
  EXPECT_EQ(parts.frames.size(), 1u);
}

// native, leaf first: c_func, eval (runs frames 0-1), ext_func, eval (runs frame 2), main.
TEST(PythonFrames, EachLoopIsFollowedByItsFramesRootFirst) {
  std::vector<AddressRange> eval = {{0x5000, 0x6000}};
  std::vector<uint64_t> native = {0x9000, 0x5100, 0x7000, 0x5200, 0x8000};
  std::vector<PyFrameRef> frames = {
      {0x1, 0, true, false}, {0x2, 0, true, true}, {0x3, 0, true, true}};
  auto spliced = gp::record::splice_python_frames(native, frames, eval);
  ASSERT_TRUE(spliced);
  std::vector<SplicedFrame> want = {{false, 0}, {true, 0}, {true, 1},  {false, 1},
                                    {false, 2}, {true, 2}, {false, 3}, {false, 4}};
  EXPECT_EQ(*spliced, want);
}

TEST(PythonFrames, ReturnAddressAtTheLoopsEndCallsFromIt) {
  // A return address equal to the loop's end calls from its last byte: in the loop.
  std::vector<AddressRange> eval = {{0x5000, 0x6000}};
  std::vector<uint64_t> native = {0x9000, 0x6000, 0x6001};
  std::vector<PyFrameRef> frames = {{0x1, 0, true, true}};
  auto spliced = gp::record::splice_python_frames(native, frames, eval);
  ASSERT_TRUE(spliced);
  EXPECT_EQ((*spliced)[1], (SplicedFrame{true, 0}));
}

TEST(PythonFrames, LoopsAndGroupsThatDoNotPairUpAreRefused) {
  std::vector<AddressRange> eval = {{0x5000, 0x6000}};
  std::vector<uint64_t> native = {0x5100, 0x7000, 0x5200};
  std::vector<PyFrameRef> one_group = {{0x1, 0, true, true}};
  EXPECT_FALSE(gp::record::splice_python_frames(native, one_group, eval));
  // A chain cut before its last loop's entry frame.
  std::vector<PyFrameRef> cut = {{0x1, 0, true, true}, {0x2, 0, true, false}};
  EXPECT_FALSE(gp::record::splice_python_frames(native, cut, eval));
  // No loop range known.
  EXPECT_FALSE(gp::record::splice_python_frames(native, one_group, {}));
}

TEST(PythonFrames, ChainThatLoopsIsRefusedEvenWhenItsGroupsPairUp) {
  // Two frames that point at each other: the walk reads them again and again to its bound and
  // marks the chain cut. Its entry frames happen to be as many as the native loops.
  std::vector<uint64_t> ips = {0x5100,
                               0x5200,
                               marker(4, gp::record::kPyCut),
                               py(0x2000, 1, false),
                               py(0x1000, 1, true),
                               py(0x2000, 1, false),
                               py(0x1000, 1, true)};
  std::vector<AddressRange> eval = {{0x5000, 0x6000}};
  auto parts = gp::record::split_python_frames(ips);
  ASSERT_EQ(parts.frames.size(), 4u);
  std::span<const uint64_t> native = std::span<const uint64_t>(ips).first(parts.native);
  EXPECT_TRUE(gp::record::splice_python_frames(native, parts.frames, eval));
  EXPECT_FALSE(gp::record::splice_python_frames(native, parts, eval));
  // An unreadable frame ends a chain the same way.
  parts.cut = false;
  parts.read_failed = true;
  EXPECT_FALSE(gp::record::splice_python_frames(native, parts, eval));
  parts.read_failed = false;
  EXPECT_TRUE(gp::record::splice_python_frames(native, parts, eval));
}

}  // namespace
}  // namespace gp::test::record
