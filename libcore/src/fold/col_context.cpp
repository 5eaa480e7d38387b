#include "fold/col_context.h"

#include <algorithm>
#include <map>

#include "fold/stack_namer.h"

namespace gp::fold::detail {

void append_col_field(std::string_view text, std::string& out) {
  for (char c : text) {
    if (c == ';') out += '|';  // gProfiler's (async-profiler's) convention for JVM signatures
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
}

ColContext make_col_context(const model::Archive& archive, const ColOptions& options) {
  ColContext ctx;
  ctx.app_metadata.push_back(json::Value::null());
  std::map<std::string, json::Value> distinct;  // dumped text → value: a stable order
  std::vector<std::string> raw;
  for (const model::Session& s : archive.sessions) {
    ProcessTable procs(s);
    for (const model::Sample& smp : s.samples) {
      if (smp.count == 0 || (smp.pid == 0 && !options.include_idle)) continue;
      const model::Process* p = procs.find(smp.pid);
      if (p == nullptr) continue;
      if (!p->container_name.empty()) ctx.containers.push_back(p->container_name);
      if (!p->container_id.empty() || !p->container_name.empty())
        ctx.container_names_enabled = true;
      if (!options.application_metadata || p->app_metadata_json.empty()) continue;
      if (ctx.app_index.count(p->app_metadata_json) != 0) continue;
      ctx.app_index[p->app_metadata_json] = 0;
      auto v = json::parse(p->app_metadata_json);
      if (v && !v->is_null()) distinct.emplace(json::dump(*v), std::move(*v));
      raw.push_back(p->app_metadata_json);
    }
  }
  std::sort(ctx.containers.begin(), ctx.containers.end());
  ctx.containers.erase(std::unique(ctx.containers.begin(), ctx.containers.end()),
                       ctx.containers.end());
  // gProfiler appends a dict unless an equal one (Python ==, order-insensitive) is listed.
  for (auto& [text, value] : distinct) {
    bool listed = std::any_of(ctx.app_metadata.begin(), ctx.app_metadata.end(),
                              [&](const json::Value& v) { return v == value; });
    if (!listed) ctx.app_metadata.push_back(std::move(value));
  }
  for (const std::string& r : raw) {
    auto v = json::parse(r);
    size_t index = 0;
    if (v && !v->is_null()) {
      for (size_t i = 1; i < ctx.app_metadata.size(); ++i)
        if (ctx.app_metadata[i] == *v) {
          index = i;
          break;
        }
    }
    ctx.app_index[r] = index;
  }
  return ctx;
}

}  // namespace gp::fold::detail
