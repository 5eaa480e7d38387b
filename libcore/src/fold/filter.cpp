#include "gp/fold/filter.h"

#include <algorithm>

#include "fold/stack_namer.h"

namespace gp::fold {
namespace {

bool container_matches(const model::Process* p, const std::vector<std::string>& wanted) {
  if (p == nullptr) return false;
  for (const std::string& w : wanted) {
    if (p->container_name == w) return true;
    // Docker-style short ids ("3f2a9c1b...") name a container as well as its name does.
    if (w.size() >= 4 && p->container_id.compare(0, w.size(), w) == 0) return true;
  }
  return false;
}

template <typename T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

uint64_t filter_samples(model::Archive& archive, const SampleFilter& f) {
  uint64_t kept = 0;
  for (model::Session& s : archive.sessions) {
    detail::ProcessTable procs(s);
    auto keep = [&](const model::Sample& smp) {
      if (f.exclude_idle && smp.pid == 0) return false;
      if (!f.pids.empty() && !contains(f.pids, smp.pid)) return false;
      if (!f.comms.empty() && !contains(f.comms, procs.comm(smp))) return false;
      if (!f.containers.empty() && !container_matches(procs.find(smp.pid), f.containers))
        return false;
      return true;
    };
    // In place: a copy of the kept samples would double the largest table at the peak.
    size_t n = 0;
    for (const model::Sample& smp : s.samples) {
      if (!keep(smp)) continue;
      kept += smp.count;
      s.samples[n++] = smp;
    }
    s.samples.resize(n);
  }
  return kept;
}

}  // namespace gp::fold
