#include "unwind_maps.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern "C" {
#include "profile.h"
}

namespace gp::record_tool {

static_assert(sizeof(gp_unwind_row) == sizeof(unwind::PackedRow), "bpf/profile.h: gp_unwind_row layout");
static_assert(sizeof(gp_unwind_page) == sizeof(unwind::PackedPage), "bpf/profile.h: gp_unwind_page layout");
static_assert(sizeof(gp_unwind_table) == sizeof(unwind::TableSlot), "bpf/profile.h: gp_unwind_table layout");
static_assert(sizeof(gp_unwind_mapping) == sizeof(unwind::MappingTable), "bpf/profile.h: gp_unwind_mapping layout");
static_assert(GP_UNWIND_MAX_MAPPINGS == unwind::ProcessTables::kMaxMappings, "bpf/profile.h: mappings per process");
static_assert(GP_UNWIND_PAGE_SHIFT == unwind::kPageShift, "bpf/profile.h: page size");

unwind::StoreLimits unwind_limits(uint32_t memory_mib) {
  const uint64_t bytes = uint64_t{memory_mib} << 20;
  return unwind::StoreLimits{static_cast<uint32_t>(bytes / 8 * 7 / 8), static_cast<uint32_t>(bytes / 8 / 8),
                             kUnwindTableSlots};
}

BpfUnwinder::BpfUnwinder(const Maps& maps, unwind::StoreLimits limits)
    : rows_fd_(bpf_map__fd(maps.rows)),
      pages_fd_(bpf_map__fd(maps.pages)),
      slots_fd_(bpf_map__fd(maps.tables)),
      mappings_fd_(bpf_map__fd(maps.mappings)),
      procs_fd_(bpf_map__fd(maps.procs)),
      store_(*this, limits),
      tables_(store_, unwind::open_mapped_file, unwind::own_vdso_image()) {}

void BpfUnwinder::write_array(int fd, uint32_t at, const void* values, size_t n) {
  keys_.resize(n);
  for (size_t i = 0; i < n; ++i) keys_[i] = at + static_cast<uint32_t>(i);
  uint32_t count = static_cast<uint32_t>(n);
  if (n == 0 || (bpf_map_update_batch(fd, keys_.data(), values, &count, nullptr) == 0 && count == n)) return;
  // Kernels without batch updates of arrays (before 5.6): one element at a time. Every element
  // written this way is 8 bytes (a row, a page).
  const auto* bytes = static_cast<const uint8_t*>(values);
  for (size_t i = 0; i < n; ++i) bpf_map_update_elem(fd, &keys_[i], bytes + i * 8, BPF_ANY);
}

void BpfUnwinder::write_rows(uint32_t at, std::span<const unwind::PackedRow> rows) {
  write_array(rows_fd_, at, rows.data(), rows.size());
}

void BpfUnwinder::write_pages(uint32_t at, std::span<const unwind::PackedPage> pages) {
  write_array(pages_fd_, at, pages.data(), pages.size());
}

void BpfUnwinder::write_slot(uint32_t slot, const unwind::TableSlot& where) {
  // After its rows and pages (each update is a system call: ordered).
  bpf_map_update_elem(slots_fd_, &slot, &where, BPF_ANY);
}

constexpr auto kQuarantine = std::chrono::milliseconds(100);

void BpfUnwinder::reuse_released() {
  const auto now = std::chrono::steady_clock::now();
  while (!released_.empty() && now - released_.front().first >= kQuarantine) {
    mapping_ranges_.give(released_.front().second.first, released_.front().second.count);
    released_.pop_front();
  }
}

void BpfUnwinder::release(const Range& r) {
  if (r.count > 0) released_.emplace_back(std::chrono::steady_clock::now(), r);
}

void BpfUnwinder::on_mappings(int32_t pid, const std::vector<model::Mapping>& mappings) {
  auto [it, inserted] = pending_.insert_or_assign(pid, mappings);
  if (inserted) pending_order_.push_back(pid);
}

void BpfUnwinder::load_next() {
  while (!pending_order_.empty()) {
    int32_t pid = pending_order_.front();
    pending_order_.pop_front();
    auto it = pending_.find(pid);
    if (it == pending_.end()) continue;  // forgotten while it waited
    auto mappings = std::move(it->second);
    pending_.erase(it);
    load(pid, mappings);
    return;
  }
}

void BpfUnwinder::load(int32_t pid, const std::vector<model::Mapping>& mappings) {
  reuse_released();
  bool changed = false;
  auto entries = tables_.update(pid, mappings, &changed);
  if (!changed) return;
  // A process whose binaries have no tables still gets an (empty) entry: its stacks are then
  // walked with frame pointers frame by frame, and not counted as taken before its tables.
  Range range{0, static_cast<uint32_t>(entries.size())};
  if (!mapping_ranges_.take(range.count, &range.first)) {
    ++no_room_;
    forget(pid);  // frame pointers for it: no stale entry
    return;
  }
  keys_.resize(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) keys_[i] = range.first + static_cast<uint32_t>(i);
  uint32_t n = range.count;
  if (n > 0 && (bpf_map_update_batch(mappings_fd_, keys_.data(), entries.data(), &n, nullptr) != 0 || n != range.count))
    for (size_t i = 0; i < entries.size(); ++i) bpf_map_update_elem(mappings_fd_, &keys_[i], &entries[i], BPF_ANY);
  uint32_t key = static_cast<uint32_t>(pid);
  gp_unwind_process value{range.first, range.count};
  if (bpf_map_update_elem(procs_fd_, &key, &value, BPF_ANY) != 0) {
    mapping_ranges_.give(range.first, range.count);
    ++no_room_;
    return;
  }
  ++entries_written_;
  auto [it, inserted] = ranges_.try_emplace(pid, range);
  if (!inserted) {
    release(it->second);
    it->second = range;
  }
}

void BpfUnwinder::forget(int32_t pid) {
  pending_.erase(pid);  // its place in pending_order_ is skipped
  uint32_t key = static_cast<uint32_t>(pid);
  bpf_map_delete_elem(procs_fd_, &key);
  tables_.forget(pid);
  if (auto it = ranges_.find(pid); it != ranges_.end()) {
    release(it->second);
    ranges_.erase(it);
  }
}

std::vector<model::Counter> BpfUnwinder::counters() const {
  const auto& s = store_.stats();
  const auto& p = tables_.stats();
  auto c = [](const char* name, uint64_t v) { return model::Counter{name, static_cast<int64_t>(v)}; };
  return {
      c("unwind.tables.loaded", s.loaded),
      c("unwind.tables.evicted", s.evicted),
      c("unwind.tables.failed", s.failed),
      c("unwind.tables.no_room", s.no_room),
      c("unwind.tables.bytes", (s.rows_used + s.pages_used) * 8),
      c("unwind.mappings", p.mappings),
      c("unwind.mappings.no_table", p.no_table),
      c("unwind.processes.no_room", no_room_),
      c("unwind.process_updates", entries_written_),
  };
}

}  // namespace gp::record_tool
