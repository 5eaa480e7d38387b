// write_folded: samples → folded lines, summed on ids (detail::StackTable, as the .col writer).
#include "fold/session_stacks.h"
#include "gp/fold/folded.h"

namespace gp::fold {

void write_folded(const model::Archive& archive, const StackOptions& stacks,
                  const FoldedOptions& options, std::ostream& out) {
  detail::StackTable table;
  detail::add_stacks(archive, stacks, options.kernel_delimiter, table);
  std::string text;
  for (const auto& [line, count] :
       detail::text_lines(table, detail::field_texts(table, options.annotate))) {
    text.assign(line);
    text += ' ';
    text += std::to_string(count);
    text += '\n';
    out << text;
  }
}

}  // namespace gp::fold
