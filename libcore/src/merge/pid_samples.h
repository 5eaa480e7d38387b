#pragma once
// A session's samples grouped by pid, in an order that depends only on what the stacks say
// (named frames and end, then tid), so scaling draws the same numbers whatever the input order.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../fold/stack_namer.h"
#include "copier.h"
#include "gp/merge/scale.h"
#include "gp/model/session.h"

namespace gp::merge::detail {

struct PidSamples {
  std::vector<const model::Sample*> samples;
  std::vector<std::string> keys;  // named stack of each sample (parallel to samples)
  uint64_t total = 0;
};

// A stack's named frames, root first (as gp-fold names them), and how many frames at its leaf
// end come from kernel locations.
struct NamedStack {
  std::vector<fold::Frame> frames;
  size_t kernel_tail = 0;
};
NamedStack name_stack(fold::detail::StackNamer& namer, const model::Session& s, uint64_t stack_id);

std::map<int32_t, PidSamples> group_by_pid(const model::Session& s);

// Copies a pid's samples with counts scaled by ratio (zeroes dropped), rounding with a
// generator of (seed, pid).
void copy_scaled(Copier& copier, int32_t pid, const PidSamples& group, double ratio, uint64_t seed);

}  // namespace gp::merge::detail
