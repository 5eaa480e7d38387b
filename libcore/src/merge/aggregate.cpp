#include "aggregate.h"

#include <algorithm>
#include <map>
#include <set>

#include "copier.h"
#include "gp/util/json.h"

namespace gp::merge::detail {
namespace {

using PidMap = std::map<std::pair<std::string, int32_t>, int32_t>;

std::set<int32_t> pids_of(const model::Session& s) {
  std::set<int32_t> pids;
  for (const model::Sample& x : s.samples) pids.insert(x.pid);
  for (const model::Process& p : s.processes) pids.insert(p.pid);
  for (const model::Thread& t : s.threads) pids.insert(t.pid);
  return pids;
}

// (hostname, pid) → output pid. Idle (0) and invalid (< 0) pids are shared by every host.
PidMap number_pids(const std::vector<model::Session>& sessions, MergeStats& stats) {
  std::map<std::string, std::set<int32_t>> by_host;
  for (const model::Session& s : sessions) by_host[s.header.host.hostname].merge(pids_of(s));
  std::set<int32_t> used;
  PidMap out;
  int32_t next = kFirstRenumberedPid;
  for (const auto& [host, pids] : by_host) {
    for (int32_t pid : pids) {
      int32_t as = pid;
      if (pid > 0 && used.count(pid)) {
        while (used.count(next)) ++next;
        as = next++;
        ++stats.pids_renumbered;
      }
      used.insert(as);
      out[{host, pid}] = as;
    }
  }
  return out;
}

json::Value host_entry(const model::Session& s) {
  json::Value v = json::Value::object();
  v.set("hostname", json::Value::from_string(s.header.host.hostname));
  v.set("session_id", json::Value::from_string(s.header.session_id));
  v.set("source", json::Value::from_string(model::to_string(s.header.source)));
  v.set("producer", json::Value::from_string(s.header.producer));
  v.set("start_time_ns", json::Value::from_int(s.header.start_time_ns));
  v.set("sampling_mode", json::Value::from_string(s.header.sampling.mode));
  auto meta = json::parse(s.header.metadata_json);
  v.set("metadata", meta && !s.header.metadata_json.empty() ? *meta : json::Value::null());
  return v;
}

std::string metadata(const std::vector<model::Session>& sessions, const PidMap& pids) {
  json::Value hosts = json::Value::array();
  for (const model::Session& s : sessions) hosts.push_back(host_entry(s));
  json::Value renumbered = json::Value::array();
  for (const auto& [key, as] : pids) {
    if (key.second == as) continue;
    json::Value r = json::Value::object();
    r.set("hostname", json::Value::from_string(key.first));
    r.set("pid", json::Value::from_int(key.second));
    r.set("as", json::Value::from_int(as));
    renumbered.push_back(std::move(r));
  }
  json::Value root = json::Value::object();
  root.set("hosts", std::move(hosts));
  root.set("renumbered_pids", std::move(renumbered));
  return json::dump(root);
}

model::Header merged_header(const std::vector<model::Session>& sessions) {
  model::Header h = sessions.front().header;
  h.source = model::SourceKind::merged;
  h.session_id.clear();
  for (const model::Session& s : sessions) {
    if (s.header.host.hostname != h.host.hostname) h.host = {};
    if (s.header.start_time_ns != 0 &&
        (h.start_time_ns == 0 || s.header.start_time_ns < h.start_time_ns))
      h.start_time_ns = s.header.start_time_ns;
    h.sampling.duration_ns = std::max(h.sampling.duration_ns, s.header.sampling.duration_ns);
    h.symbolized = h.symbolized && s.header.symbolized;
  }
  return h;
}

void copy_session(const model::Session& s, const PidMap& pids, Target& target) {
  Copier copier(s, target);
  for (const auto& [key, as] : pids)
    if (key.first == s.header.host.hostname) copier.renumber(key.second, as);
  for (const model::Process& p : s.processes) copier.process(p);
  for (const model::Thread& t : s.threads)
    target.builder().thread(t.tid == t.pid ? copier.pid(t.tid) : t.tid, copier.pid(t.pid), t.comm);
  for (const model::Sample& x : s.samples) copier.sample(x, x.count);
}

}  // namespace

model::Session aggregate(const std::vector<model::Session>& sessions, MergeStats& stats) {
  model::Session out;
  if (sessions.empty()) return out;
  PidMap pids = number_pids(sessions, stats);
  out.header = merged_header(sessions);
  out.header.metadata_json = metadata(sessions, pids);
  // Kernel symbols only make sense for one host's kernel: kept when every session shares it.
  if (!out.header.host.hostname.empty()) {
    for (const model::Session& s : sessions) {
      if (s.kernel_symbols.empty()) continue;
      out.kernel_symbols = s.kernel_symbols;
      break;
    }
  }
  Target target(out);
  for (const model::Session& s : sessions) copy_session(s, pids, target);
  return out;
}

}  // namespace gp::merge::detail
