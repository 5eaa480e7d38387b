// From CFI sections to a merged table: choose the sections, order and clip the FDEs, run each
// FDE's program, and merge equal neighbours.

#include <algorithm>
#include <string>

#include "gp/unwind/table.h"
#include "unwind/cfa_program.h"
#include "unwind/cfi_entries.h"

namespace gp::unwind {
namespace {

// The executable ranges sorted and merged, so that each FDE is checked with a binary search
// (a hostile file may have thousands of program headers).
std::vector<std::pair<uint64_t, uint64_t>> merged_ranges(const CfiInput& input) {
  auto r = input.text_ranges;
  std::sort(r.begin(), r.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto& range : r) {
    if (!out.empty() && range.first <= out.back().second) {
      out.back().second = std::max(out.back().second, range.second);
    } else {
      out.push_back(range);
    }
  }
  return out;
}

bool in_text(const std::vector<std::pair<uint64_t, uint64_t>>& ranges, const Fde& fde) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), fde.start,
                             [](uint64_t a, const auto& r) { return a < r.first; });
  if (it == ranges.begin()) return false;
  --it;
  return fde.start >= it->first && fde.end <= it->second;
}

// Sorted by start; where two FDEs start at the same address the first parsed (.eh_frame) wins,
// and an FDE that runs into the next one ends where the next one starts.
std::vector<Fde> order_fdes(const CfiInput& input, std::vector<Fde> fdes, uint64_t& skipped) {
  const auto ranges = merged_ranges(input);
  std::vector<Fde> kept;
  kept.reserve(fdes.size());
  for (const Fde& f : fdes) {
    if (ranges.empty() || in_text(ranges, f)) kept.push_back(f);
    else ++skipped;
  }
  const auto by_start = [](const Fde& a, const Fde& b) { return a.start < b.start; };
  if (!std::is_sorted(kept.begin(), kept.end(), by_start)) {
    std::stable_sort(kept.begin(), kept.end(), by_start);
  }
  std::vector<Fde> out;
  out.reserve(kept.size());
  for (const Fde& f : kept) {
    if (!out.empty() && out.back().start == f.start) {
      ++skipped;
      continue;
    }
    if (!out.empty() && out.back().end > f.start) out.back().end = f.start;
    out.push_back(f);
  }
  return out;
}

// Appends `row` unless it says the same as the last row.
void append_merged(std::vector<Row>& rows, const Row& row) {
  if (!rows.empty()) {
    const Row& last = rows.back();
    if (last.rule == row.rule && last.cfa_offset == row.cfa_offset &&
        last.rbp_offset == row.rbp_offset) {
      return;
    }
  }
  rows.push_back(row);
}

Result<Table> compile(const std::vector<Fde>& fdes, const std::vector<Cie>& cies, TableStats stats,
                      uint64_t max_rows) {
  const auto too_many = [&] {
    return make_error("more than " + std::to_string(max_rows) + " unwind rows");
  };
  std::vector<FrameState> initial(cies.size());
  std::vector<bool> done(cies.size(), false);
  Table table;
  table.stats = stats;
  std::vector<Row> fde_rows;
  table.rows.reserve(fdes.size() * 3);
  for (size_t i = 0; i < fdes.size(); ++i) {
    const Fde& f = fdes[i];
    const Cie& cie = cies[f.cie];
    fde_rows.clear();
    bool followed = true;
    if (cie.signal) {
      fde_rows.push_back(Row{f.start, Rule::signal, 0, 0});
    } else {
      if (!done[f.cie]) {
        initial[f.cie] = initial_state(cie);
        done[f.cie] = true;
      }
      const uint64_t left = max_rows - std::min(max_rows, table.stats.rows_raw);
      const RunResult run = run_fde(f, f.end, cie, initial[f.cie], left, fde_rows);
      if (run.overflow) return too_many();
      followed = run.followed;
    }
    ++table.stats.fdes;
    if (!followed) ++table.stats.fdes_unsupported;
    table.stats.rows_raw += fde_rows.size();
    for (const Row& r : fde_rows) append_merged(table.rows, r);
    if (i + 1 == fdes.size() || fdes[i + 1].start != f.end) {
      ++table.stats.rows_raw;
      append_merged(table.rows, Row{f.end, Rule::none, 0, 0});
    }
    if (table.stats.rows_raw > max_rows) return too_many();
  }
  return table;
}

SectionContext context(const CfiInput& input, const CfiSection& section, bool eh) {
  return SectionContext{section, eh, input.data_base, input.text_base};
}

}  // namespace

const char* rule_name(Rule rule) {
  switch (rule) {
    case Rule::none:
      return "none";
    case Rule::rsp:
      return "rsp";
    case Rule::rbp:
      return "rbp";
    case Rule::plt:
      return "plt";
    case Rule::signal:
      return "signal";
    case Rule::end:
      return "end";
    case Rule::unsupported:
      return "unsupported";
  }
  return "?";
}

Result<Table> build_table_from_sections(const CfiInput& input) {
  if (input.eh_frame.data.empty() && input.debug_frame.data.empty()) {
    return make_error("no .eh_frame or .debug_frame");
  }
  if (input.eh_frame.data.size() > kMaxSectionBytes ||
      input.debug_frame.data.size() > kMaxSectionBytes) {
    return make_error("CFI section larger than " + std::to_string(kMaxSectionBytes >> 20) + " MiB");
  }
  const uint64_t max_rows = input.max_rows ? input.max_rows : kMaxRows;
  const auto too_many = make_error("more than " + std::to_string(max_rows) + " FDEs");
  CfiEntries entries;
  entries.max_fdes = max_rows;
  parse_cfi_section(context(input, input.eh_frame, true), entries);
  if (entries.too_many) return too_many;
  TableStats stats;
  stats.source = Source::eh_frame;
  if (!input.debug_frame.data.empty()) {
    CfiEntries debug;
    debug.max_fdes = max_rows;
    parse_cfi_section(context(input, input.debug_frame, false), debug);
    if (debug.too_many) return too_many;
    if (debug.fdes.size() > entries.fdes.size()) {
      stats.source = entries.fdes.empty() ? Source::debug_frame : Source::both;
      const auto offset = static_cast<uint32_t>(entries.cies.size());
      for (Fde& f : debug.fdes) f.cie += offset;
      entries.cies.insert(entries.cies.end(), debug.cies.begin(), debug.cies.end());
      entries.fdes.insert(entries.fdes.end(), debug.fdes.begin(), debug.fdes.end());
      entries.skipped += debug.skipped;
    }
  }
  stats.cies = entries.cies.size();
  stats.fdes_skipped = entries.skipped;
  const std::vector<Fde> fdes = order_fdes(input, std::move(entries.fdes), stats.fdes_skipped);
  return compile(fdes, entries.cies, stats, max_rows);
}

}  // namespace gp::unwind
