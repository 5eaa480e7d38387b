// From CFI sections to a merged table: choose the sections, order and clip the FDEs, run each
// FDE's program, and merge equal neighbours.

#include <algorithm>
#include <string>

#include "gp/unwind/table.h"
#include "unwind/cfa_program.h"
#include "unwind/cfi_entries.h"
#include "unwind/packer.h"

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
// and an FDE that runs into the next one ends where the next one starts. In place: a large
// binary has a hundred thousand FDEs, and fresh memory costs a page fault per 4 KiB.
void order_fdes(const CfiInput& input, std::vector<Fde>& fdes, uint64_t& skipped) {
  const auto ranges = merged_ranges(input);
  if (!ranges.empty()) {
    const auto outside =
        std::remove_if(fdes.begin(), fdes.end(), [&](const Fde& f) { return !in_text(ranges, f); });
    skipped += static_cast<uint64_t>(fdes.end() - outside);
    fdes.erase(outside, fdes.end());
  }
  const auto by_start = [](const Fde& a, const Fde& b) { return a.start < b.start; };
  if (!std::is_sorted(fdes.begin(), fdes.end(), by_start)) {
    std::stable_sort(fdes.begin(), fdes.end(), by_start);
  }
  size_t kept = 0;
  for (size_t i = 0; i < fdes.size(); ++i) {
    const Fde& f = fdes[i];
    if (kept > 0 && fdes[kept - 1].start == f.start) {
      ++skipped;
      continue;
    }
    if (kept > 0 && fdes[kept - 1].end > f.start) fdes[kept - 1].end = f.start;
    fdes[kept++] = f;
  }
  fdes.resize(kept);
}

// The most rows the FDEs can give: each row after an FDE's first needs an advance instruction
// (a byte at least), and each FDE may end with a `none` row. Reserving it once spares the
// copies (and the page faults) of a growing vector: tables of large binaries have a million rows.
uint64_t row_bound(const std::vector<Fde>& fdes, uint64_t max_rows) {
  uint64_t bound = 0;
  for (const Fde& f : fdes) {
    bound += static_cast<uint64_t>(f.insns_end - f.insns) + 2;
    if (bound > max_rows) return max_rows + 1;
  }
  return bound;
}

// Appends `row` unless it says the same as the last row.
void append_merged(std::vector<Row>& rows, const Row& row) {
  if (!rows.empty()) {
    const Row& last = rows.back();
    if (last.rule == row.rule && last.cfa_offset == row.cfa_offset &&
        last.rbp_offset == row.rbp_offset && last.cfa_add == row.cfa_add &&
        last.cfa_register == row.cfa_register) {
      return;
    }
  }
  rows.push_back(row);
}

// Counts one FDE's outcome (it has an unsupported row, a reg row) and forms into stats (see
// TableStats).
void count_forms(bool unsupported, bool reg, uint32_t forms, TableStats& stats) {
  stats.fdes_with_unsupported_rows += unsupported;
  stats.fdes_register += reg;
  for (; forms != 0; forms &= forms - 1) {
    const auto form = static_cast<size_t>(__builtin_ctz(forms));
    ++stats.form_fdes[form];
    stats.form_fdes_unsupported[form] += unsupported;
    stats.form_fdes_register[form] += reg;
  }
}

// Runs every FDE's program and gives `sink` (bool(const Row&), false to stop) the rows in
// address order, neighbours not yet merged. Fills stats' fdes, fdes_unsupported, rows_raw and,
// with `survey`, the FDE counts by outcome and form.
template <typename Sink>
Status compile(const std::vector<Fde>& fdes, const std::vector<Cie>& cies, TableStats& stats,
               uint64_t max_rows, bool survey, Sink&& sink) {
  const auto too_many = [&] {
    return make_error("more than " + std::to_string(max_rows) + " unwind rows");
  };
  std::vector<FrameState> initial(cies.size());
  std::vector<bool> done(cies.size(), false);
  std::vector<Row> fde_rows;
  for (size_t i = 0; i < fdes.size(); ++i) {
    const Fde& f = fdes[i];
    const Cie& cie = cies[f.cie];
    fde_rows.clear();
    uint32_t forms = 0;
    bool followed = true;
    if (cie.signal) {
      fde_rows.push_back(Row{f.start, Rule::signal, 0, 0});
      forms = uint32_t{1} << static_cast<unsigned>(CfiForm::signal);
    } else {
      if (!done[f.cie]) {
        initial[f.cie] = initial_state(cie);
        done[f.cie] = true;
      }
      const uint64_t left = max_rows - std::min(max_rows, stats.rows_raw);
      const RunResult run = run_fde(f, f.end, cie, initial[f.cie], left, fde_rows, survey);
      if (run.overflow) return too_many();
      followed = run.followed;
      forms = run.forms;
    }
    ++stats.fdes;
    if (!followed) ++stats.fdes_unsupported;
    stats.rows_raw += fde_rows.size();
    if (survey) {
      auto has = [&](Rule rule) {
        return std::any_of(fde_rows.begin(), fde_rows.end(),
                           [&](const Row& r) { return r.rule == rule; });
      };
      count_forms(has(Rule::unsupported), has(Rule::reg), forms, stats);
    }
    for (const Row& r : fde_rows)
      if (!sink(r)) return ok_status();
    if (i + 1 == fdes.size() || fdes[i + 1].start != f.end) {
      ++stats.rows_raw;
      if (!sink(Row{f.end, Rule::none, 0, 0})) return ok_status();
    }
    if (stats.rows_raw > max_rows) return too_many();
  }
  return ok_status();
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
    case Rule::deref_rsp:
      return "deref-rsp";
    case Rule::deref_rbp:
      return "deref-rbp";
    case Rule::reg:
      return "reg";
  }
  return "?";
}

const char* cfi_form_name(CfiForm form) {
  static constexpr const char* kNames[kCfiForms] = {
      "cfa-rsp",          "cfa-rbp",        "cfa-register",    "cfa-expr-plt",
      "cfa-expr-deref",   "cfa-expr-other", "saved-at-offset", "saved-in-register",
      "saved-expression", "val-expression", "val-offset",      "undefined",
      "same-value",       "restore",        "remember-state",  "args-size",
      "signal",           "unknown-opcode"};
  const auto i = static_cast<size_t>(form);
  return i < kCfiForms ? kNames[i] : "?";
}

namespace {

// The FDEs of the sections chosen (see build_table_from_sections), ordered and clipped, with
// their CIEs; stats' source, cies and fdes_skipped filled.
Status collect(const CfiInput& input, uint64_t max_rows, CfiEntries& entries, TableStats& stats) {
  if (input.eh_frame.data.empty() && input.debug_frame.data.empty()) {
    return make_error("no .eh_frame or .debug_frame");
  }
  if (input.eh_frame.data.size() > kMaxSectionBytes ||
      input.debug_frame.data.size() > kMaxSectionBytes) {
    return make_error("CFI section larger than " + std::to_string(kMaxSectionBytes >> 20) + " MiB");
  }
  const auto too_many = make_error("more than " + std::to_string(max_rows) + " FDEs");
  entries.max_fdes = max_rows;
  parse_cfi_section(context(input, input.eh_frame, true), entries);
  if (entries.too_many) return too_many;
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
  order_fdes(input, entries.fdes, stats.fdes_skipped);
  return ok_status();
}

}  // namespace

Result<Table> build_table_from_sections(const CfiInput& input) {
  const uint64_t max_rows = input.max_rows ? input.max_rows : kMaxRows;
  CfiEntries entries;
  Table table;
  if (Status s = collect(input, max_rows, entries, table.stats); !s) return s.error();
  table.rows.reserve(row_bound(entries.fdes, max_rows));
  Status s =
      compile(entries.fdes, entries.cies, table.stats, max_rows, input.survey, [&](const Row& r) {
        append_merged(table.rows, r);
        return true;
      });
  if (!s) return s.error();
  return table;
}

Result<PackedTable> build_packed_from_sections(const CfiInput& input) {
  const uint64_t max_rows = input.max_rows ? input.max_rows : kMaxRows;
  CfiEntries entries;
  TableStats stats;
  if (Status s = collect(input, max_rows, entries, stats); !s) return s.error();
  Packer packer;
  packer.reserve(row_bound(entries.fdes, max_rows));
  Status s = compile(entries.fdes, entries.cies, stats, max_rows, input.survey,
                     [&](const Row& r) { return packer.add(r); });
  if (!s) return s.error();
  return packer.finish();
}

}  // namespace gp::unwind
