// apply_weight: sample counts by period share, in sample units, with exact session totals.
#include "gp/fold/weight.h"

#include <algorithm>
#include <vector>

namespace gp::fold {
namespace {

void weigh_session(model::Session& s) {
  unsigned __int128 weight_sum = 0;
  uint64_t weighted_count = 0;
  bool uniform = true;  // every weighted sample has the same period: nothing changes
  uint64_t first_w = 0, first_c = 0;
  for (const model::Sample& x : s.samples) {
    if (x.weight == 0 || x.count == 0) continue;
    weight_sum += x.weight;
    weighted_count += x.count;
    if (first_c == 0) {
      first_w = x.weight;
      first_c = x.count;
    } else if (static_cast<unsigned __int128>(x.weight) * first_c !=
               static_cast<unsigned __int128>(first_w) * x.count) {
      uniform = false;
    }
  }
  if (weight_sum == 0 || uniform) return;
  // Floors first, then the units still missing go to the largest remainders (ties: the
  // earlier sample), so the session keeps exactly weighted_count samples.
  struct Share {
    size_t index;
    unsigned __int128 remainder;
  };
  std::vector<Share> shares;
  uint64_t given = 0;
  for (size_t i = 0; i < s.samples.size(); ++i) {
    model::Sample& x = s.samples[i];
    if (x.weight == 0 || x.count == 0) continue;
    unsigned __int128 scaled = static_cast<unsigned __int128>(x.weight) * weighted_count;
    x.count = static_cast<uint64_t>(scaled / weight_sum);
    given += x.count;
    shares.push_back({i, scaled % weight_sum});
  }
  uint64_t missing = weighted_count - given;  // < shares.size()
  std::stable_sort(shares.begin(), shares.end(),
                   [](const Share& a, const Share& b) { return a.remainder > b.remainder; });
  for (uint64_t k = 0; k < missing && k < shares.size(); ++k) ++s.samples[shares[k].index].count;
}

}  // namespace

bool parse_weight(std::string_view text, Weight& out) {
  if (text == "samples") out = Weight::samples;
  else if (text == "period") out = Weight::period;
  else return false;
  return true;
}

void apply_weight(model::Archive& archive, Weight weight) {
  if (weight == Weight::samples) return;
  for (model::Session& s : archive.sessions) weigh_session(s);
}

}  // namespace gp::fold
