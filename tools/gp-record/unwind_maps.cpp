#include "unwind_maps.h"

#include <bpf/bpf.h>
#include <sys/mman.h>
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

namespace {

Result<void*> map_array(bpf_map* map, size_t* size) {
  *size = static_cast<size_t>(bpf_map__max_entries(map)) * bpf_map__value_size(map);
  long page = sysconf(_SC_PAGESIZE);
  *size = (*size + page - 1) / page * page;
  void* addr = mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
  if (addr == MAP_FAILED) return make_error(std::string("cannot map the unwind tables: ") + std::strerror(errno));
  return addr;
}

}  // namespace

BpfUnwinder::BpfUnwinder(unwind::StoreLimits limits, int procs_fd)
    : procs_fd_(procs_fd),
      store_(*this, limits),
      tables_(store_, unwind::open_mapped_file, unwind::own_vdso_image()) {}

Result<std::unique_ptr<BpfUnwinder>> BpfUnwinder::open(const Maps& maps, unwind::StoreLimits limits) {
  std::unique_ptr<BpfUnwinder> u(new BpfUnwinder(limits, bpf_map__fd(maps.procs)));
  for (auto [map, mapped] : {std::pair{maps.rows, &u->rows_}, {maps.pages, &u->pages_}, {maps.tables, &u->slots_},
                             {maps.mappings, &u->mappings_}}) {
    auto addr = map_array(map, &mapped->size);
    if (!addr) return addr.error();
    mapped->addr = *addr;
  }
  return u;
}

BpfUnwinder::~BpfUnwinder() {
  for (Mapped* m : {&rows_, &pages_, &slots_, &mappings_})
    if (m->addr != nullptr) munmap(m->addr, m->size);
}

void BpfUnwinder::write_rows(uint32_t at, std::span<const unwind::PackedRow> rows) {
  std::memcpy(static_cast<unwind::PackedRow*>(rows_.addr) + at, rows.data(), rows.size_bytes());
}

void BpfUnwinder::write_pages(uint32_t at, std::span<const unwind::PackedPage> pages) {
  std::memcpy(static_cast<unwind::PackedPage*>(pages_.addr) + at, pages.data(), pages.size_bytes());
}

void BpfUnwinder::write_slot(uint32_t slot, const unwind::TableSlot& where) {
  // The rows and pages are in memory before the slot that names them (x86: stores in order;
  // the fence keeps the compiler from reordering them).
  __atomic_thread_fence(__ATOMIC_RELEASE);
  std::memcpy(static_cast<unwind::TableSlot*>(slots_.addr) + slot, &where, sizeof(where));
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
  std::memcpy(static_cast<unwind::MappingTable*>(mappings_.addr) + range.first, entries.data(),
              entries.size() * sizeof(entries[0]));
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
