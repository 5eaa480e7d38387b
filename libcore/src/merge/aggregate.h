#pragma once
// --aggregate (internal): many sessions, possibly of several hosts, into one session.
// Tables are re-interned; processes are keyed by (hostname, pid): pids of the first host (in
// sorted order) keep their number, a pid that another host already uses is renumbered from
// 4194304 up (above Linux's largest pid_max) in (hostname, pid) order. header.metadata_json
// gets {"hosts": [one object per input session: hostname, session_id, source, producer,
// start_time_ns, sampling_mode, metadata], "renumbered_pids": [{hostname, pid, as}]}.

#include <vector>

#include "gp/merge/merge.h"
#include "gp/model/session.h"

namespace gp::merge::detail {

inline constexpr int32_t kFirstRenumberedPid = 4194304;

model::Session aggregate(const std::vector<model::Session>& sessions, MergeStats& stats);

}  // namespace gp::merge::detail
