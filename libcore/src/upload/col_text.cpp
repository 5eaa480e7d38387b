// Splitting a `.col` into header and stacks (reference/gprofiler.md §2.1).
#include "gp/upload/col_text.h"

namespace gp::upload {

Result<ColText> split_col(std::string_view text) {
  ColText col;
  if (text.empty() || text.front() != '#') {
    col.stacks = text;
    return col;
  }
  size_t nl = text.find('\n');
  std::string_view line = text.substr(1, nl == std::string_view::npos ? text.size() - 1 : nl - 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto parsed = json::parse(line);
  if (!parsed) return make_error("bad header line: " + parsed.error().message);
  if (!parsed->is_object()) return make_error("bad header line: not a JSON object");
  col.header = std::move(*parsed);
  col.stacks = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  return col;
}

}  // namespace gp::upload
