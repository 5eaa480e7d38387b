#include "gp/merge/scale.h"

#include <cmath>

namespace gp::merge {
namespace {

// splitmix64: tiny, well mixed, and the same on every platform (std distributions are not).
uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

Rounder::Rounder(uint64_t seed, int64_t stream) : state_(seed) {
  uint64_t mix = seed ^ (static_cast<uint64_t>(stream) * 0xd1b54a32d192ed03ull);
  state_ = splitmix(mix);
}

double Rounder::next_unit() { return static_cast<double>(splitmix(state_) >> 11) * 0x1.0p-53; }

uint64_t Rounder::scale(uint64_t count, double ratio) {
  if (ratio == 1.0) return count;
  double x = static_cast<double>(count) * ratio;
  double whole = std::floor(x);
  double frac = x - whole;
  auto out = static_cast<uint64_t>(whole);
  if (frac > 0 && next_unit() < frac) ++out;
  return out;
}

}  // namespace gp::merge
