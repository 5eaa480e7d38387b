// Address spaces of a perf.data's processes (see perf_data_maps.h).

#include "import/perf_data_maps.h"

#include <iterator>

#include "import/perf_dso.h"

namespace gp::import {

void PerfAddressSpace::map(uint64_t start, uint64_t len, PerfRegion region) {
  if (len == 0) return;
  uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
  region.end = end;
  region.mapping_id = 0;
  // The first region that may overlap: the one before start, if it reaches past it.
  auto it = regions_.lower_bound(start);
  if (it != regions_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) it = prev;
  }
  while (it != regions_.end() && it->first < end) {
    uint64_t old_start = it->first;
    PerfRegion old = std::move(it->second);
    it = regions_.erase(it);
    if (old_start < start) {  // its head stays
      PerfRegion head = old;
      head.end = start;
      head.mapping_id = 0;
      head.table_looked_up = false;  // its bias is found again for where it now starts
      head.table = nullptr;
      regions_.emplace(old_start, std::move(head));
    }
    if (old.end > end) {  // its tail stays, at a file offset moved by as much
      PerfRegion tail = std::move(old);
      tail.pgoff += end - old_start;
      tail.mapping_id = 0;
      tail.table_looked_up = false;
      tail.table = nullptr;
      regions_.emplace(end, std::move(tail));
      break;
    }
  }
  regions_.emplace(start, std::move(region));
}

PerfRegion* PerfAddressSpace::find(uint64_t addr, uint64_t& start) {
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return nullptr;
  --it;
  if (addr >= it->second.end) return nullptr;
  start = it->first;
  return &it->second;
}

void PerfAddressSpace::copy_from(const PerfAddressSpace& parent) {
  regions_ = parent.regions_;
  for (auto& [start, r] : regions_) r.mapping_id = 0;  // another pid: another archive mapping
}

model::Mapping archive_mapping(int32_t pid, uint64_t start, const PerfRegion& r) {
  model::Mapping m;
  m.pid = pid;
  m.start = start;
  m.end = r.end;
  m.file_offset = r.pgoff;
  m.path = r.path;
  m.build_id = r.build_id;
  m.dev = r.dev;
  m.inode = r.inode;
  // perf names anonymous memory "//anon"; classify_dso knows the names perf script prints.
  m.kind = r.path == "//anon" || r.path.empty() ? model::MappingKind::anonymous
                                                : classify_dso(r.path).mapping;
  return m;
}

}  // namespace gp::import
