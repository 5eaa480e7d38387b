#include "scope_index.h"

#include <dwarf.h>

#include <algorithm>

namespace gp::symbolize {
namespace {

// Nesting deeper than this is not real code (and would exhaust the stack on crafted input).
constexpr unsigned kMaxDepth = 512;
// dwz partial units imported per CU; guards against import cycles in crafted input.
constexpr int kMaxImports = 4096;

struct Range {
  Dwarf_Addr start, end;
  int32_t scope;
  unsigned depth;
};

enum class Visit { record, walk, import, skip };

// The DIEs dwarf_getscopes looks through: function scopes are recorded, blocks and type or
// namespace containers are walked for the function scopes inside them, the rest is skipped.
Visit classify_die(Dwarf_Die* die) {
  switch (dwarf_tag(die)) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_entry_point:
      return Visit::record;
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_module:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
      return Visit::walk;
    case DW_TAG_imported_unit:
      return Visit::import;
    default:
      return Visit::skip;
  }
}

// One walk over a CU's DIE tree, collecting its function scopes and their address ranges.
struct Collector {
  std::vector<ScopeIndex::Scope>& scopes;
  std::vector<Range> ranges;
  int imports_left = kMaxImports;

  void children(Dwarf_Die* parent, int32_t enclosing, unsigned depth) {
    Dwarf_Die child;
    if (depth > kMaxDepth || dwarf_child(parent, &child) != 0) return;
    do visit(&child, enclosing, depth);
    while (dwarf_siblingof(&child, &child) == 0);
  }

  void visit(Dwarf_Die* die, int32_t enclosing, unsigned depth) {
    switch (classify_die(die)) {
      case Visit::record: {
        auto index = static_cast<int32_t>(scopes.size());
        scopes.push_back({*die, enclosing});
        add_ranges(die, index, depth);
        children(die, index, depth + 1);
        return;
      }
      case Visit::walk:
        children(die, enclosing, depth + 1);
        return;
      case Visit::import: {
        Dwarf_Attribute attr;
        Dwarf_Die unit;
        if (imports_left-- > 0 && dwarf_attr(die, DW_AT_import, &attr) != nullptr &&
            dwarf_formref_die(&attr, &unit) != nullptr)
          children(&unit, enclosing, depth + 1);
        return;
      }
      case Visit::skip:
        return;
    }
  }

  void add_ranges(Dwarf_Die* die, int32_t scope, unsigned depth) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0)
      if (end > start) ranges.push_back({start, end, scope, depth});
  }
};

// Disjoint segments from properly nested ranges: a sweep in start order with a stack of the
// ranges still open; the top of the stack (the deepest open range) owns the address.
class SegmentBuilder {
 public:
  explicit SegmentBuilder(const std::vector<ScopeIndex::Scope>& scopes) : scopes_(scopes) {}

  std::vector<ScopeIndex::Segment> build(std::vector<Range>& ranges) {
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
      if (a.start != b.start) return a.start < b.start;
      if (a.depth != b.depth) return a.depth < b.depth;
      return a.end > b.end;
    });
    for (Range r : ranges) {
      close_until(r.start);
      // dwarf_getscopes reaches r only through its parent's range: r must start inside its
      // parent's open range and in no other. Otherwise (overlapping siblings, a child outside
      // its parent) r, and all inside it, is ambiguous.
      if (!reached_through_parent(r)) r.scope = ScopeIndex::kAmbiguous;
      emit(r.start, r.scope);
      open_.push_back(r);
    }
    close_until(~Dwarf_Addr{0});
    return std::move(segments_);
  }

 private:
  bool reached_through_parent(const Range& r) const {
    int32_t parent = scopes_[static_cast<size_t>(r.scope)].parent;
    if (open_.empty()) return parent < 0;
    int32_t top = open_.back().scope;
    return top != ScopeIndex::kAmbiguous && (top == parent || top == r.scope);
  }
  void close_until(Dwarf_Addr limit) {
    while (!open_.empty() && open_.back().end <= limit) {
      Dwarf_Addr end = open_.back().end;
      open_.pop_back();
      // Ranges that end inside a deeper one (not nested: bad DWARF) are over too.
      while (!open_.empty() && open_.back().end <= end) open_.pop_back();
      emit(end, open_.empty() ? -1 : open_.back().scope);
    }
  }
  void emit(Dwarf_Addr start, int32_t scope) {
    if (!segments_.empty() && segments_.back().start == start) {
      segments_.back().scope = scope;
      return;
    }
    if (!segments_.empty() && segments_.back().scope == scope) return;
    segments_.push_back({start, scope});
  }

  const std::vector<ScopeIndex::Scope>& scopes_;
  std::vector<Range> open_;
  std::vector<ScopeIndex::Segment> segments_;
};

}  // namespace

const ScopeIndex::Scope* ScopeIndex::Hit::parent(const Scope& s) const {
  return s.parent < 0 ? nullptr : &(*scopes)[static_cast<size_t>(s.parent)];
}

ScopeIndex::CuTable& ScopeIndex::table_for(Dwarf_Die* cu) {
  auto& slot = tables_[cu->addr];
  if (slot) return *slot;
  slot = std::make_unique<CuTable>();
  slot->cu = *cu;
  Collector collector{slot->scopes, {}};
  collector.children(cu, -1, 0);
  slot->segments = SegmentBuilder(slot->scopes).build(collector.ranges);
  return *slot;
}

ScopeIndex::Hit ScopeIndex::lookup(Dwarf_Addr addr) {
  Hit hit;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module_, addr, &bias);
  if (cu == nullptr) return hit;
  CuTable& table = table_for(cu);
  hit.cu = &table.cu;
  hit.scopes = &table.scopes;
  Dwarf_Addr a = addr - bias;
  hit.cu_address = a;
  auto it = std::upper_bound(table.segments.begin(), table.segments.end(), a,
                             [](Dwarf_Addr v, const Segment& s) { return v < s.start; });
  if (it == table.segments.begin()) return hit;
  --it;
  hit.ambiguous = it->scope == kAmbiguous;
  if (it->scope >= 0) hit.innermost = &table.scopes[static_cast<size_t>(it->scope)];
  return hit;
}

}  // namespace gp::symbolize
