#include "gp/fold/top.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace gp::fold {

TopTable top_frames(const std::vector<FoldedStack>& stacks, size_t n) {
  TopTable table;
  std::unordered_map<std::string, TopRow> rows;
  std::unordered_set<std::string> in_stack;
  for (const FoldedStack& st : stacks) {
    table.samples += st.count;
    in_stack.clear();
    for (size_t i = 0; i < st.frames.size(); ++i) {
      std::string name = st.frames[i].name + kind_suffix(st.frames[i].kind);
      TopRow& row = rows[name];
      if (i + 1 == st.frames.size()) row.self += st.count;
      if (in_stack.insert(name).second) row.total += st.count;
    }
  }
  for (auto& [name, row] : rows) {
    row.frame = name;
    table.rows.push_back(std::move(row));
  }
  std::sort(table.rows.begin(), table.rows.end(), [](const TopRow& a, const TopRow& b) {
    if (a.self != b.self) return a.self > b.self;
    if (a.total != b.total) return a.total > b.total;
    return a.frame < b.frame;
  });
  if (table.rows.size() > n) table.rows.resize(n);
  return table;
}

void write_top(const TopTable& table, std::ostream& out) {
  auto pct = [&](uint64_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%", table.samples ? 100.0 * v / table.samples : 0.0);
    return std::string(buf);
  };
  char line[128];
  std::snprintf(line, sizeof line, "%12s %7s %12s %7s  %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%",
                "FRAME");
  out << line;
  for (const TopRow& r : table.rows) {
    std::snprintf(line, sizeof line, "%12llu %7s %12llu %7s  ",
                  static_cast<unsigned long long>(r.self), pct(r.self).c_str(),
                  static_cast<unsigned long long>(r.total), pct(r.total).c_str());
    out << line << r.frame << '\n';
  }
}

}  // namespace gp::fold
