// write_top_functions (gp/record/summary.h): read, symbolize in memory, fold, rank.
#include "gp/record/summary.h"

#include "gp/archive/reader.h"
#include "gp/fold/stacks.h"
#include "gp/fold/top.h"
#include "gp/symbolize/symbolizer.h"

namespace gp::record {

Status write_top_functions(const std::string& path, size_t n, std::ostream& out) {
  auto archive = archive::read_archive(path);
  if (!archive) return archive.error();
  for (auto& session : archive->sessions) symbolize::symbolize_session(session, {});
  fold::StackOptions options;
  options.process_frame = false;  // functions, not processes
  options.include_idle = false;
  auto table = fold::top_frames(fold::fold_stacks(*archive, options), n);
  if (table.samples != 0) fold::write_top(table, out);
  return ok_status();
}

}  // namespace gp::record
