#include "gp/merge/merge.h"

#include <algorithm>
#include <tuple>

#include "aggregate.h"
#include "gp/merge/runtime.h"
#include "gp/merge/smart.h"

namespace gp::merge {
namespace {

using model::Session;

bool before(const Session& a, const Session& b) {
  const model::Header& x = a.header;
  const model::Header& y = b.header;
  return std::tie(x.host.hostname, x.session_id, x.start_time_ns, x.source, x.sampling.mode) <
         std::tie(y.host.hostname, y.session_id, y.start_time_ns, y.source, y.sampling.mode);
}

bool is_runtime(const Session& s) { return s.header.source == model::SourceKind::runtime; }

// Replaces the fp and dwarf sessions by their smart merge.
Status apply_smart(std::vector<Session>& sessions, const MergeOptions& o, MergeStats& stats) {
  std::vector<size_t> fp, dwarf;
  for (size_t i = 0; i < sessions.size(); ++i) {
    if (is_runtime(sessions[i])) continue;
    if (sessions[i].header.sampling.mode == "fp") fp.push_back(i);
    if (sessions[i].header.sampling.mode == "dwarf") dwarf.push_back(i);
  }
  if (fp.size() != 1 || dwarf.size() != 1) {
    return make_error(
        "--smart needs exactly one fp and one dwarf session (header sampling mode); "
        "found " +
        std::to_string(fp.size()) + " fp and " + std::to_string(dwarf.size()) + " dwarf");
  }
  Session smart = merge_smart(sessions[fp[0]], sessions[dwarf[0]], o.seed, stats);
  sessions.erase(sessions.begin() + static_cast<std::ptrdiff_t>(std::max(fp[0], dwarf[0])));
  sessions.erase(sessions.begin() + static_cast<std::ptrdiff_t>(std::min(fp[0], dwarf[0])));
  sessions.push_back(std::move(smart));
  return ok_status();
}

// The system session a runtime session belongs to: same host, else the only one there is.
Session* system_for(std::vector<Session>& systems, const Session& rt) {
  for (Session& s : systems)
    if (s.header.host.hostname == rt.header.host.hostname) return &s;
  return systems.size() == 1 ? &systems.front() : nullptr;
}

}  // namespace

Result<model::Archive> merge_archives(std::vector<model::Archive> inputs,
                                      const MergeOptions& options, MergeStats* stats_out) {
  MergeStats stats;
  std::vector<Session> sessions;
  for (model::Archive& a : inputs)
    for (Session& s : a.sessions) sessions.push_back(std::move(s));
  if (options.smart) {
    if (Status st = apply_smart(sessions, options, stats); !st) return st.error();
  }
  std::vector<Session> systems, runtimes;
  for (Session& s : sessions) (is_runtime(s) ? runtimes : systems).push_back(std::move(s));
  std::stable_sort(systems.begin(), systems.end(), before);
  std::stable_sort(runtimes.begin(), runtimes.end(), before);
  std::vector<Session> out;
  for (Session& rt : runtimes) {
    Session* sys = options.perf_less ? nullptr : system_for(systems, rt);
    if (sys != nullptr) {
      merge_runtime(*sys, rt, options.seed, stats);
    } else {
      out.push_back(std::move(rt));
    }
  }
  for (Session& s : systems) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), before);
  model::Archive result;
  if (options.aggregate && out.size() > 1) {
    result.sessions.push_back(detail::aggregate(out, stats));
  } else {
    result.sessions = std::move(out);
  }
  for (Session& s : result.sessions) {
    s.truncated = false;
    s.trailer.reset();
    s.location_updates.clear();
  }
  if (stats_out) *stats_out = stats;
  return result;
}

}  // namespace gp::merge
