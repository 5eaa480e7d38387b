// write_col: samples → gProfiler `.col` lines (reference/gprofiler.md §2.4), summed and sorted.
//
// Samples are summed on integer ids, not on line texts (detail::StackTable, shared with the
// folded writer): line texts are built only for the distinct lines at the end.
#include "fold/col_context.h"
#include "fold/session_stacks.h"

namespace gp::fold {
namespace {

using model::FrameKind;

// The frames that start every line of a sample's (pid, tid, comm), in gProfiler's order:
// [idx;]container;comm[;appid: X][;error frame] — the error frame is attached after comm by
// the merge, the appid inserted after comm afterwards.
void prefix_frames(const detail::ProcessTable& procs, const detail::ColContext& ctx,
                   const ColOptions& o, const model::Sample& smp, detail::StackTable& t,
                   std::vector<uint32_t>& out) {
  const model::Process* p = procs.find(smp.pid);
  if (o.profile_api_version != "v1") {
    if (o.application_metadata) {
      size_t idx = 0;
      if (p != nullptr && !p->app_metadata_json.empty())
        idx = ctx.app_index.at(p->app_metadata_json);
      out.push_back(t.frame(std::to_string(idx), FrameKind::pseudo));
    }
    bool named = o.container_names && p != nullptr;
    out.push_back(t.frame(named ? p->container_name : std::string(), FrameKind::pseudo));
  }
  out.push_back(t.frame(procs.comm(smp), FrameKind::pseudo));
  if (p != nullptr && !p->appid.empty())
    out.push_back(t.frame("appid: " + p->appid, FrameKind::pseudo));
  if (p != nullptr && !p->error_frame.empty())
    out.push_back(t.frame(p->error_frame, FrameKind::pseudo));
}

}  // namespace

Status write_col(const model::Archive& archive, const ColOptions& options, std::ostream& out) {
  if (options.profile_api_version != "v1" && options.profile_api_version != "v2")
    return make_error("unknown profile API version '" + options.profile_api_version + "'");
  detail::ColContext ctx = detail::make_col_context(archive, options);
  detail::StackTable table;
  detail::StackView view;
  view.include_idle = options.include_idle;
  view.truncated_marker = options.truncated_marker;
  view.insert_dso_name = options.insert_dso_name;
  for (const model::Session& s : archive.sessions) {
    detail::ProcessTable procs(s);
    detail::SessionStacks(s, table, view)
        .add_samples([&](const model::Sample& smp, std::vector<uint32_t>& frames) {
          prefix_frames(procs, ctx, options, smp, table, frames);
        });
  }
  out << "# " << json::dump(detail::make_col_header(archive, options, ctx));
  std::string text;
  for (const auto& [line, count] : detail::text_lines(table, detail::field_texts(table, true))) {
    text.clear();
    text += '\n';
    text += line;
    text += ' ';
    text += std::to_string(count);
    out << text;
  }
  return ok_status();
}

}  // namespace gp::fold
