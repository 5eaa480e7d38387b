#include "unwind_maps.h"

#include <bpf/bpf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "gp/cli/tool.h"
#include "gp/unwind/store_rules.h"

extern "C" {
#include "profile.h"
}

namespace gp::record_tool {

static_assert(sizeof(gp_unwind_row) == sizeof(unwind::PackedRow),
              "bpf/profile.h: gp_unwind_row layout");
static_assert(sizeof(gp_unwind_rule) == sizeof(unwind::PackedRule),
              "bpf/profile.h: gp_unwind_rule layout");
static_assert(sizeof(gp_unwind_row_block) == GP_UNWIND_ROW_BLOCK * sizeof(unwind::PackedRow),
              "rows without gaps");
static_assert(GP_UNWIND_MAX_RULES == unwind::kMaxPackedRules, "bpf/profile.h: rules");
static_assert(GP_UNWIND_DEREF_RSP == static_cast<int>(unwind::Rule::deref_rsp) &&
                  GP_UNWIND_DEREF_RBP == static_cast<int>(unwind::Rule::deref_rbp) &&
                  GP_UNWIND_REG == static_cast<int>(unwind::Rule::reg) &&
                  GP_UNWIND_KIND_MASK == unwind::kKindMask &&
                  GP_UNWIND_ADD_SHIFT == unwind::kAddShift,
              "bpf/profile.h: rule kinds");
static_assert(sizeof(gp_unwind_page) == sizeof(unwind::PackedPage),
              "bpf/profile.h: gp_unwind_page layout");
static_assert(sizeof(gp_unwind_table) == sizeof(unwind::TableSlot),
              "bpf/profile.h: gp_unwind_table layout");
static_assert(sizeof(gp_unwind_mapping) == sizeof(unwind::MappingTable),
              "bpf/profile.h: gp_unwind_mapping layout");
static_assert(GP_UNWIND_MAX_MAPPINGS == unwind::ProcessTables::kMaxMappings,
              "bpf/profile.h: mappings per process");
static_assert(GP_UNWIND_PAGE_SHIFT == unwind::kPageShift, "bpf/profile.h: page size");

// How long a forgotten process's tables stay for its last stack copies: longer than a flush
// interval (copies that could not be unwound at once wait for their drain).
constexpr auto kRetireAfter = std::chrono::seconds(10);

unwind::StoreLimits unwind_limits(uint32_t memory_mib) {
  const uint64_t bytes = uint64_t{memory_mib} << 20;
  const uint64_t rows =
      bytes / 16 * 15 / sizeof(unwind::PackedRow) / GP_UNWIND_ROW_BLOCK * GP_UNWIND_ROW_BLOCK;
  return unwind::StoreLimits{static_cast<uint32_t>(rows),
                             static_cast<uint32_t>(bytes / 16 / sizeof(unwind::PackedPage)),
                             kUnwindTableSlots, GP_UNWIND_MAX_RULES};
}

BpfUnwinder::BpfUnwinder(const Maps& maps, unwind::StoreLimits limits, const std::string& cache_dir)
    : rules_fd_(bpf_map__fd(maps.rules)),
      rows_fd_(bpf_map__fd(maps.rows)),
      pages_fd_(bpf_map__fd(maps.pages)),
      slots_fd_(bpf_map__fd(maps.tables)),
      mappings_fd_(bpf_map__fd(maps.mappings)),
      procs_fd_(bpf_map__fd(maps.procs)),
      generation_(maps.generation),
      store_(*this, limits),
      tables_(store_, unwind::open_mapped_file, unwind::own_vdso_image()) {
  // The rows and pages as the BPF program reads them, for unwind_copy (none if they cannot be
  // mapped: copies are then walked with frame pointers).
  rows_bytes_ = size_t{bpf_map__max_entries(maps.rows)} * bpf_map__value_size(maps.rows);
  pages_bytes_ = size_t{bpf_map__max_entries(maps.pages)} * bpf_map__value_size(maps.pages);
  void* rows = mmap(nullptr, rows_bytes_, PROT_READ, MAP_SHARED, rows_fd_, 0);
  void* pages = mmap(nullptr, pages_bytes_, PROT_READ, MAP_SHARED, pages_fd_, 0);
  if (rows != MAP_FAILED && pages != MAP_FAILED) {
    rows_view_ = {static_cast<const unwind::PackedRow*>(rows),
                  rows_bytes_ / sizeof(unwind::PackedRow)};
    pages_view_ = {static_cast<const unwind::PackedPage*>(pages),
                   pages_bytes_ / sizeof(unwind::PackedPage)};
  } else {
    if (rows != MAP_FAILED) munmap(rows, rows_bytes_);
    if (pages != MAP_FAILED) munmap(pages, pages_bytes_);
  }
  if (!cache_dir.empty()) {
    cache_ =
        std::make_unique<unwind::TableCache>(cache_dir, unwind::TableCache::kDefaultMaxBytes,
                                             [](const std::string& why) { gp::cli::warning(why); });
    tables_.set_cache(cache_.get());
  }
  publish_counters();
  worker_ = std::thread([this] { run(); });
}

BpfUnwinder::~BpfUnwinder() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  worker_.join();
  if (!rows_view_.empty()) munmap(const_cast<unwind::PackedRow*>(rows_view_.data()), rows_bytes_);
  if (!pages_view_.empty())
    munmap(const_cast<unwind::PackedPage*>(pages_view_.data()), pages_bytes_);
}

std::optional<unwind::WalkedStack> BpfUnwinder::unwind_copy(int32_t pid,
                                                            const unwind::UserRegisters& regs,
                                                            const unwind::StackCopy& stack,
                                                            bool wait) {
  std::unique_lock lock(tables_mu_, std::defer_lock);
  if (wait) lock.lock();
  else if (!lock.try_lock()) return std::nullopt;
  const std::vector<unwind::MappingTable>* entries = tables_.entries(pid);
  if (entries == nullptr || rows_view_.empty()) return std::nullopt;
  unwind::StoreRuleSource rules({rules_copy_, rows_view_, pages_view_, slots_copy_}, *entries);
  return unwind::walk_stack(regs, stack, rules);
}

bool BpfUnwinder::wait_idle_for(std::chrono::milliseconds limit) {
  std::unique_lock lock(mu_);
  return idle_.wait_for(lock, limit, [&] { return ops_.empty() && !busy_; });
}

void BpfUnwinder::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait_for(lock, kRetireAfter / 4, [&] { return stop_ || !ops_.empty(); });
    if (stop_) return;
    if (ops_.empty()) {
      lock.unlock();
      {
        std::lock_guard tables(tables_mu_);
        retire_due();
      }
      lock.lock();
      continue;
    }
    auto next = next_op();
    Op op = std::move(*next);
    ops_.erase(next);
    busy_ = true;
    lock.unlock();
    if (op.forget) {
      if (listener_) listener_(op.pid, true, op.exited);
      std::lock_guard tables(tables_mu_);
      if (op.exited) {
        retire(op.pid);
      } else {
        retiring_pids_.erase(op.pid);
        forget_now(op.pid);
      }
    } else {
      bool first = false;
      {
        std::lock_guard loading(mu_);
        loading_pid_ = op.pid;
        stop_load_.store(false, std::memory_order_relaxed);
      }
      {
        std::lock_guard tables(tables_mu_);
        retiring_pids_.erase(op.pid);  // its new image's tables replace the old ones
        first = written_.count(op.pid) == 0;
        load(op.pid, op.mappings, op.exited);
        first = first && written_.count(op.pid) != 0;
        retire_due();
      }
      if (first && op.queued != std::chrono::steady_clock::time_point{}) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - op.queued)
                            .count();
        std::lock_guard lock_waits(mu_);
        ++first_load_wait_[std::min<size_t>(static_cast<size_t>(us) / kWaitBucketUs, kWaitBuckets)];
      }
      if (listener_) listener_(op.pid, false, false);
    }
    publish_counters();
    lock.lock();
    loading_pid_ = -1;
    busy_ = false;
    if (ops_.empty()) idle_.notify_all();
  }
}

std::deque<BpfUnwinder::Op>::iterator BpfUnwinder::next_op() {
  // A forget first (cheap: it frees tables). Else the newest load that is its pid's first op (a
  // forget or an older load of the pid goes first): a process announced just now is likely to
  // live briefly, and its first samples wait for its tables as copies; one that waited already
  // (the processes running when the recorder started, a burst of new ones) has had its copies
  // drained.
  if (ops_.front().forget) return ops_.begin();
  std::unordered_set<int32_t> seen;
  auto chosen = ops_.begin();
  for (auto it = ops_.begin(); it != ops_.end(); ++it)
    if (seen.insert(it->pid).second && !it->forget) chosen = it;
  return chosen;
}

void BpfUnwinder::wait_idle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return ops_.empty() && !busy_; });
}

bool BpfUnwinder::write_mapped(int fd, uint32_t at, const void* values, size_t n, size_t size) {
  // Only the pages written are mapped, for the copy: the recorder's RSS does not grow with the
  // tables (the maps are kernel memory either way). A memory copy, where a batch update would
  // copy and check each element on its own (for libc's 40,000 rows, most of the loading
  // thread's time).
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (n == 0) return true;
  const size_t offset = size_t{at} * size, start = offset / page * page;
  const size_t length = (offset + n * size - start + page - 1) / page * page;
  void* p =
      mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(start));
  if (p == MAP_FAILED) return false;
  std::memcpy(static_cast<uint8_t*>(p) + (offset - start), values, n * size);
  munmap(p, length);
  return true;
}

bool BpfUnwinder::write_rules(uint32_t at, std::span<const unwind::PackedRule> rules) {
  for (size_t i = 0; i < rules.size(); ++i) {
    uint32_t key = at + static_cast<uint32_t>(i);
    if (bpf_map_update_elem(rules_fd_, &key, &rules[i], BPF_ANY) != 0) return false;
  }
  if (rules_copy_.size() < size_t{at} + rules.size()) rules_copy_.resize(size_t{at} + rules.size());
  std::copy(rules.begin(), rules.end(), rules_copy_.begin() + at);
  return true;
}

bool BpfUnwinder::write_rows(uint32_t at, std::span<const unwind::PackedRow> rows) {
  // 16 rows to an element of the map, without gaps: row i is at byte 4 * i.
  return write_mapped(rows_fd_, at, rows.data(), rows.size(), sizeof(unwind::PackedRow));
}

bool BpfUnwinder::write_pages(uint32_t at, std::span<const unwind::PackedPage> pages) {
  return write_mapped(pages_fd_, at, pages.data(), pages.size(), sizeof(unwind::PackedPage));
}

bool BpfUnwinder::write_slot(uint32_t slot, const unwind::TableSlot& where) {
  // After its rows and pages (munmap and this update are system calls: ordered).
  if (bpf_map_update_elem(slots_fd_, &slot, &where, BPF_ANY) != 0) return false;
  if (slots_copy_.size() <= slot) slots_copy_.resize(size_t{slot} + 1);
  slots_copy_[slot] = where;
  return true;
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

void BpfUnwinder::skip_own_image(int32_t pid) {
  struct stat st {};
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0 || ::stat("/proc/self/exe", &st) != 0) return;  // every mapping is loaded then
  std::lock_guard lock(mu_);
  own_path_.assign(path, static_cast<size_t>(n));
  own_inode_ = st.st_ino;
  held_pid_ = pid;
}

void BpfUnwinder::on_mappings(int32_t pid, const std::vector<model::Mapping>& mappings) {
  {
    std::lock_guard lock(mu_);
    if (pid == held_pid_) {
      // Still gp-record's image (the command not exec'd yet): nothing of it is wanted. Its
      // first other mappings are the command's: from then on it is a process like any other.
      const bool own = std::any_of(mappings.begin(), mappings.end(), [&](const auto& m) {
        return m.kind == model::MappingKind::user && m.inode == own_inode_ && m.path == own_path_;
      });
      if (own) {
        ++held_skipped_;
        return;
      }
      held_pid_ = -1;
    }
    // A load still waiting for pid takes the newer mappings instead.
    for (Op& op : ops_)
      if (op.pid == pid && !op.forget) {
        op.mappings = mappings;
        return;
      }
    ops_.push_back(Op{pid, false, false, mappings, std::chrono::steady_clock::now()});
  }
  wake_.notify_one();
}

void BpfUnwinder::load(int32_t pid, const std::vector<model::Mapping>& mappings, bool exited) {
  reuse_released();
  // No mappings: the process is gone (announced again by a sample of its exit). Its entry, if
  // any, stays for the rest of its exit's samples.
  if (mappings.empty()) return;
  bool changed = false;
  // An exec of pid that comes meanwhile stops the load (its forget, queued, drops the rest).
  auto updated = tables_.update_unless(
      pid, mappings, &changed, [this] { return stop_load_.load(std::memory_order_relaxed); });
  if (!updated) {
    ++loads_stopped_;
    return;
  }
  auto& entries = *updated;
  with_no_table(mappings, entries);
  if (auto it = written_.find(pid); !changed && it != written_.end() && it->second == entries)
    return;
  // A process whose binaries have no tables still gets an (empty) entry: its stacks are then
  // walked with frame pointers frame by frame, and not counted as taken before its tables.
  Range range{0, static_cast<uint32_t>(entries.size())};
  if (!mapping_ranges_.take(range.count, &range.first)) {
    ++no_room_;
    forget_now(pid);  // frame pointers for it: no stale entry
    return;
  }
  keys_.resize(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) keys_[i] = range.first + static_cast<uint32_t>(i);
  uint32_t n = range.count;
  if (n > 0 &&
      (bpf_map_update_batch(mappings_fd_, keys_.data(), entries.data(), &n, nullptr) != 0 ||
       n != range.count))
    for (size_t i = 0; i < entries.size(); ++i)
      bpf_map_update_elem(mappings_fd_, &keys_[i], &entries[i], BPF_ANY);
  uint32_t key = static_cast<uint32_t>(pid);
  gp_unwind_process value{range.first, range.count, ++serial_, exited ? 1u : 0u};
  if (bpf_map_update_elem(procs_fd_, &key, &value, BPF_ANY) != 0) {
    mapping_ranges_.give(range.first, range.count);
    ++no_room_;
    return;
  }
  next_generation();
  ++entries_written_;
  written_[pid] = std::move(entries);
  auto [it, inserted] = ranges_.try_emplace(pid, range);
  if (!inserted) {
    release(it->second);
    it->second = range;
  }
}

void BpfUnwinder::with_no_table(const std::vector<model::Mapping>& mappings,
                                std::vector<unwind::MappingTable>& entries) {
  // The BPF walk copies the stack of a sample whose pc lies in a file mapping the entry does not
  // list (its table is not loaded yet): the file mappings without a table are listed too, as
  // such, so that their code takes frame-pointer steps at once.
  const size_t with_tables = entries.size();
  for (const auto& m : mappings) {
    if (m.kind != model::MappingKind::user || entries.size() >= GP_UNWIND_MAX_MAPPINGS) continue;
    bool listed = false;
    for (size_t i = 0; i < with_tables && !listed; ++i)
      listed = entries[i].start < m.end && m.start < entries[i].end;
    if (!listed) entries.push_back(unwind::MappingTable{m.start, m.end, 0, GP_UNWIND_NO_TABLE, 0});
  }
  if (entries.size() == with_tables) return;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
}

void BpfUnwinder::next_generation() {
  // After the map's change (a system call: ordered before this store): a CPU that reads the new
  // generation finds the new entry.
  if (generation_ != nullptr) __atomic_fetch_add(generation_, 1u, __ATOMIC_SEQ_CST);
}

void BpfUnwinder::forget(int32_t pid, bool exited) {
  // The kernel's entry goes at once (the loading thread's forget deletes it again, after a load
  // that may have been under way).
  uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_delete_elem(procs_fd_, &key) == 0) next_generation();
  {
    std::lock_guard lock(mu_);
    // After an exec the queued loads are of the old image. After an exit they are the only
    // tables the process's stack copies can get (its mappings cannot be read again): they are
    // loaded, and their kernel entry serves only the rest of its exit.
    if (exited) {
      for (Op& op : ops_)
        if (op.pid == pid && !op.forget) op.exited = true;
    } else {
      std::erase_if(ops_, [&](const Op& op) { return op.pid == pid && !op.forget; });
      // The load under way, if of pid, is of the old image too.
      if (loading_pid_ == pid) stop_load_.store(true, std::memory_order_relaxed);
    }
    ops_.push_back(Op{pid, true, exited, {}});
  }
  wake_.notify_one();
}

void BpfUnwinder::retire(int32_t pid) {
  written_.erase(pid);
  uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_delete_elem(procs_fd_, &key) == 0) next_generation();
  if (auto it = ranges_.find(pid); it != ranges_.end()) {
    release(it->second);
    ranges_.erase(it);
  }
  if (tables_.entries(pid) == nullptr) return;
  retiring_pids_[pid] = ++retirements_;
  retiring_.push_back(Retiring{std::chrono::steady_clock::now(), pid, retirements_});
}

void BpfUnwinder::retire_due() {
  const auto now = std::chrono::steady_clock::now();
  while (!retiring_.empty() && now - retiring_.front().when >= kRetireAfter) {
    const Retiring r = retiring_.front();
    retiring_.pop_front();
    // Only its latest retirement, and only when it was not loaded again since.
    auto it = retiring_pids_.find(r.pid);
    if (it == retiring_pids_.end() || it->second != r.count) continue;
    retiring_pids_.erase(it);
    tables_.forget(r.pid);
  }
}

void BpfUnwinder::forget_now(int32_t pid) {
  written_.erase(pid);
  uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_delete_elem(procs_fd_, &key) == 0) next_generation();
  tables_.forget(pid);
  if (auto it = ranges_.find(pid); it != ranges_.end()) {
    release(it->second);
    ranges_.erase(it);
  }
}

std::vector<std::string> BpfUnwinder::take_failures() {
  std::lock_guard lock(mu_);
  return std::exchange(failures_, {});
}

std::vector<model::Counter> BpfUnwinder::counters() const {
  std::lock_guard lock(mu_);
  std::vector<model::Counter> list = counters_;
  uint64_t n = 0;
  for (uint64_t b : first_load_wait_) n += b;
  list.push_back(model::Counter{"unwind.first_loads", static_cast<int64_t>(n)});
  list.push_back(model::Counter{"unwind.loads.held_image", static_cast<int64_t>(held_skipped_)});
  list.push_back(
      model::Counter{"unwind.first_load_us.p50", static_cast<int64_t>(first_load_wait_us(0.5))});
  list.push_back(
      model::Counter{"unwind.first_load_us.p95", static_cast<int64_t>(first_load_wait_us(0.95))});
  return list;
}

uint64_t BpfUnwinder::first_load_wait_us(double q) const {
  uint64_t n = 0;
  for (uint64_t b : first_load_wait_) n += b;
  if (n == 0) return 0;
  const auto rank = static_cast<uint64_t>(q * static_cast<double>(n - 1)) + 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < first_load_wait_.size(); ++i) {
    seen += first_load_wait_[i];
    if (seen >= rank) return (i + 1) * kWaitBucketUs;
  }
  return first_load_wait_.size() * kWaitBucketUs;
}

// On the loading thread: its counters and failures, for the recorder's thread to read.
void BpfUnwinder::publish_counters() {
  const auto& s = store_.stats();
  const auto& p = tables_.stats();
  auto c = [](const char* name, uint64_t v) {
    return model::Counter{name, static_cast<int64_t>(v)};
  };
  std::vector<model::Counter> list = {
      c("unwind.tables.loaded", s.loaded),
      c("unwind.tables.evicted", s.evicted),
      c("unwind.tables.failed", s.failed),
      c("unwind.tables.no_room", s.no_room),
      c("unwind.tables.bytes", s.rows_used * sizeof(unwind::PackedRow) +
                                   s.pages_used * sizeof(unwind::PackedPage) +
                                   s.rules * sizeof(unwind::PackedRule)),
      c("unwind.tables.built", p.built),
      c("unwind.tables.cache_hits", cache_ ? cache_->stats().hits : 0),
      c("unwind.tables.cache_misses", cache_ ? cache_->stats().misses : 0),
      c("unwind.tables.cache_refused", cache_ ? cache_->stats().refused : 0),
      c("unwind.tables.cache_written", cache_ ? cache_->stats().written : 0),
      c("unwind.tables.cache_write_failed", cache_ ? cache_->stats().write_failed : 0),
      c("unwind.tables.cache_evicted", cache_ ? cache_->stats().evicted : 0),
      c("unwind.mappings", p.mappings),
      c("unwind.mappings.no_table", p.no_table),
      c("unwind.processes.no_room", no_room_),
      c("unwind.loads.stopped", loads_stopped_),
      c("unwind.process_updates", entries_written_),
  };
  auto failed = tables_.take_failures();
  std::lock_guard lock(mu_);
  counters_ = std::move(list);
  for (auto& f : failed)
    if (failures_.size() < 64) failures_.push_back(std::move(f));
}

}  // namespace gp::record_tool
