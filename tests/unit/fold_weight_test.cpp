// apply_weight: period-weighted sample counts keep perf report's proportions and each
// session's sample total; sessions without periods, or with equal ones, stay as they are.

#include <gtest/gtest.h>

#include "gp/fold/stacks.h"
#include "gp/fold/weight.h"
#include "gp/model/builder.h"

namespace gp::test::fold {
namespace {

using gp::fold::apply_weight;
using gp::fold::Weight;

std::vector<uint64_t> counts(const model::Session& s) {
  std::vector<uint64_t> out;
  for (const auto& x : s.samples) out.push_back(x.count);
  return out;
}

// One session whose samples have the given (count, summed period) pairs.
model::Archive archive_of(const std::vector<std::pair<uint64_t, uint64_t>>& samples) {
  model::Archive a;
  model::Session& s = a.sessions.emplace_back();
  model::SessionBuilder b(s);
  for (size_t i = 0; i < samples.size(); ++i) {
    uint64_t loc =
        b.symbolic_location(model::FrameKind::native, b.function("f" + std::to_string(i)));
    b.add_sample(1, 1, b.stack({loc}), samples[i].first, samples[i].second);
  }
  return a;
}

TEST(ApplyWeight, GivesPeriodSharesInSampleUnits) {
  // page-faults in frequency mode: 10 samples of a burst with 1000 faults each, 90 samples
  // of a trickle with 10 faults each. By samples the trickle is 90 %; by faults it is 8.3 %.
  model::Archive a = archive_of({{10, 10'000}, {90, 900}});
  apply_weight(a, Weight::period);
  EXPECT_EQ(counts(a.sessions[0]), (std::vector<uint64_t>{92, 8}));
  EXPECT_EQ(a.sessions[0].total_samples(), 100u);
}

TEST(ApplyWeight, KeepsTheTotalExactWhenSharesRound) {
  model::Archive a = archive_of({{1, 1}, {1, 1}, {1, 1}, {4, 3}});
  apply_weight(a, Weight::period);
  // 7 samples over a weight of 6: 7/6 each for the first three, 3.5 for the last.
  EXPECT_EQ(a.sessions[0].total_samples(), 7u);
  EXPECT_EQ(counts(a.sessions[0]), (std::vector<uint64_t>{1, 1, 1, 4}));
  model::Archive tiny = archive_of({{1, 1}, {1, 1'000'000}});
  apply_weight(tiny, Weight::period);
  EXPECT_EQ(counts(tiny.sessions[0]), (std::vector<uint64_t>{0, 2}));  // a ramp-up sample weighs ~0
}

TEST(ApplyWeight, LeavesEqualPeriodsUnweightedSamplesAndSampleModeAlone) {
  model::Archive equal = archive_of({{3, 30'000'000}, {5, 50'000'000}});  // cpu-clock at 100 Hz
  apply_weight(equal, Weight::period);
  EXPECT_EQ(counts(equal.sessions[0]), (std::vector<uint64_t>{3, 5}));
  model::Archive none = archive_of({{3, 0}, {5, 0}});  // runtime profilers, folded text
  apply_weight(none, Weight::period);
  EXPECT_EQ(counts(none.sessions[0]), (std::vector<uint64_t>{3, 5}));
  model::Archive mixed = archive_of({{10, 10'000}, {90, 900}, {7, 0}});
  apply_weight(mixed, Weight::period);
  EXPECT_EQ(counts(mixed.sessions[0]), (std::vector<uint64_t>{92, 8, 7}));
  model::Archive samples = archive_of({{10, 10'000}, {90, 900}});
  apply_weight(samples, Weight::samples);
  EXPECT_EQ(counts(samples.sessions[0]), (std::vector<uint64_t>{10, 90}));
}

TEST(ApplyWeight, ParsesItsNames) {
  Weight w = Weight::samples;
  EXPECT_TRUE(gp::fold::parse_weight("period", w));
  EXPECT_EQ(w, Weight::period);
  EXPECT_TRUE(gp::fold::parse_weight("samples", w));
  EXPECT_EQ(w, Weight::samples);
  EXPECT_FALSE(gp::fold::parse_weight("cycles", w));
}

}  // namespace
}  // namespace gp::test::fold
