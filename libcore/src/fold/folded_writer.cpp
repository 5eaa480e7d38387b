#include <algorithm>
#include <map>

#include "fold/col_context.h"
#include "gp/fold/folded.h"

namespace gp::fold {

void write_folded(const std::vector<FoldedStack>& stacks, const FoldedOptions& options,
                  std::ostream& out) {
  std::map<std::string, uint64_t> lines;  // sorted by text
  std::string text;
  for (const FoldedStack& st : stacks) {
    text.clear();
    bool seen_user = false, delimited = false;
    for (const Frame& f : st.frames) {
      bool kernel = f.kind == model::FrameKind::kernel;
      // bcc's -d: "-" where the user part ends and the kernel part begins.
      if (options.kernel_delimiter && kernel && seen_user && !delimited) {
        text += ";-";
        delimited = true;
      }
      if (!kernel && f.kind != model::FrameKind::pseudo) seen_user = true;
      if (!text.empty()) text += ';';
      detail::append_col_field(f.name, text);
      if (options.annotate) text += kind_suffix(f.kind);
    }
    lines[text] += st.count;
  }
  for (const auto& [line, count] : lines) out << line << ' ' << count << '\n';
}

}  // namespace gp::fold
