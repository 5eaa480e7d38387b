#pragma once
// The BPF sampler's unwind tables (--unwind dwarf|auto): libcore's TableStore and ProcessTables
// over the BPF program's maps. Rows and pages are copied in through mmap, table slots written with
// one update per table; a process's mapped tables are a range of a shared array, named by its entry
// in a small hash, written when its mappings are read (first sample, follow-ups, dlopen) and
// removed when it execs, exits or is forgotten.
//
// Tables are built and loaded on a thread of their own, the newest announcement first (a
// recorder that starts on a busy host has every running process's tables to build, and a process
// that starts meanwhile would otherwise wait behind them all): the recorder's thread only queues,
// so building a large binary's table (tens of milliseconds for a browser or a JVM) never delays
// the snapshot of a process announced meanwhile (one that lives 50 ms). Everything below the
// queue runs on that thread.

#include <bpf/libbpf.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"
#include "gp/unwind/process_tables.h"
#include "gp/unwind/ranges.h"
#include "gp/unwind/stack_walker.h"
#include "gp/unwind/table_store.h"
#include "gp/util/result.h"
#include "sampler.h"

namespace gp::record_tool {

// Array sizes for --unwind-memory MiB: 15/16 of it rows (4 bytes each), 1/16 pages (8 bytes
// each); the shared rules (at most 65,536, 8 bytes each in the map) come on top.
unwind::StoreLimits unwind_limits(uint32_t memory_mib);
inline constexpr uint32_t kUnwindTableSlots = 8192;
inline constexpr uint32_t kUnwindProcesses = 16384;
inline constexpr uint32_t kUnwindMappings = 65536;  // every process's mapped tables: 2 MiB

class BpfUnwinder final : public Unwinder, private unwind::TableMemory {
 public:
  // The maps of a loaded program.
  struct Maps {
    bpf_map* rules;
    bpf_map* rows;
    bpf_map* pages;
    bpf_map* tables;
    bpf_map* mappings;
    bpf_map* procs;
    // Bumped after every change of `procs`: the BPF program's per-CPU copies of entries hold
    // only within a generation (its .bss, mapped into this process).
    uint32_t* generation;
  };
  // cache_dir: the table cache's directory ("" for none).
  BpfUnwinder(const Maps& maps, unwind::StoreLimits limits, const std::string& cache_dir);
  ~BpfUnwinder() override;
  BpfUnwinder(const BpfUnwinder&) = delete;
  BpfUnwinder& operator=(const BpfUnwinder&) = delete;

  void on_mappings(int32_t pid, const std::vector<model::Mapping>& mappings) override;
  void skip_own_image(int32_t pid) override;
  void forget(int32_t pid, bool exited) override;
  void wait_idle() override;
  std::vector<model::Counter> counters() const override;
  std::vector<std::string> take_failures() override;

  // Like wait_idle, for at most `limit`; false when still busy then.
  bool wait_idle_for(std::chrono::milliseconds limit);
  // Unwinds a copy of pid's user stack with the tables loaded for it now (the BPF walker's
  // rules, over the very arrays it reads); nullopt when pid has no tables loaded, or, without
  // `wait`, when the loading thread is changing them. Any thread.
  std::optional<unwind::WalkedStack> unwind_copy(int32_t pid, const unwind::UserRegisters& regs,
                                                 const unwind::StackCopy& stack, bool wait);
  // Called on the loading thread after each load of a pid's tables (gone false) and before
  // they are dropped (gone true; exited false: for its exec, the new image's come next). Set
  // before anything is queued.
  using Listener = std::function<void(int32_t pid, bool gone, bool exited)>;
  void set_listener(Listener listener) { listener_ = std::move(listener); }

 private:
  // exited: the process has exited (its entry serves only the rest of its exit).
  void load(int32_t pid, const std::vector<model::Mapping>& mappings, bool exited);
  // The pid whose load the loading thread runs now (-1: none), and whether an exec of it came
  // meanwhile: the load then stops at its next mapping (its mappings are the old image's, and
  // the new image's tables would wait behind them). Both under mu_; stop_load_ read without.
  int32_t loading_pid_ = -1;
  std::atomic<bool> stop_load_{false};
  uint64_t loads_stopped_ = 0;  // loading thread
  // skip_own_image's pid (-1: none) and the mappings of it skipped, under mu_; this
  // executable's inode and path, as /proc/PID/maps shows them.
  int32_t held_pid_ = -1;
  uint64_t held_skipped_ = 0;
  uint64_t own_inode_ = 0;
  std::string own_path_;
  bool write_rules(uint32_t at, std::span<const unwind::PackedRule> rules) override;
  bool write_rows(uint32_t at, std::span<const unwind::PackedRow> rows) override;
  bool write_pages(uint32_t at, std::span<const unwind::PackedPage> pages) override;
  bool write_slot(uint32_t slot, const unwind::TableSlot& where) override;
  // n elements of `size` bytes into [at, at + n) of a mmapable array (elements laid out without
  // gaps); false when it cannot be mapped.
  static bool write_mapped(int fd, uint32_t at, const void* values, size_t n, size_t size);

  // A process's range of unwind_mappings.
  struct Range {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  void release(const Range& r);
  // Ranges a process no longer names go back for reuse only after kQuarantine: a BPF program
  // that looked the process up just before may still read them (for microseconds).
  void reuse_released();

  int rules_fd_, rows_fd_, pages_fd_, slots_fd_, mappings_fd_, procs_fd_;
  uint32_t* generation_;
  std::vector<uint32_t> keys_;  // the batch updates' keys
  unwind::Ranges mapping_ranges_{kUnwindMappings};
  std::unordered_map<int32_t, Range> ranges_;
  // Adds the file mappings that have no table, as such (GP_UNWIND_NO_TABLE), to a process's
  // entries (sorted by start again).
  static void with_no_table(const std::vector<model::Mapping>& mappings,
                            std::vector<unwind::MappingTable>& entries);
  // Each process's entries as last written (those with tables and those without).
  std::unordered_map<int32_t, std::vector<unwind::MappingTable>> written_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, Range>> released_;
  // The queue between the recorder's thread and the loading thread: a load (the latest mappings
  // read for a pid) or a forget, in order.
  struct Op {
    int32_t pid = 0;
    bool forget = false;
    bool exited = false;  // a forget after the process's exit: retired, not dropped at once;
                          // a load: of a process that has exited since its mappings were read
    std::vector<model::Mapping> mappings;
    std::chrono::steady_clock::time_point queued{};  // of the first of the loads it merged
  };
  // Time from a process's mappings being handed over (its announcement, read and snapshot) to
  // its first tables loaded, in kWaitBucketUs buckets (the last: that long or more), under mu_.
  static constexpr uint32_t kWaitBucketUs = 100;
  static constexpr size_t kWaitBuckets = 1000;
  std::vector<uint64_t> first_load_wait_ = std::vector<uint64_t>(kWaitBuckets + 1, 0);
  // The wait's percentile q (0..1) in microseconds (a bucket's upper end); 0 when none.
  uint64_t first_load_wait_us(double q) const;
  void run();
  // The op to run next (ops_ not empty; under mu_).
  std::deque<Op>::iterator next_op();
  void forget_now(int32_t pid);
  // A forgotten process's tables stay for unwind_copy a little longer (the stack copies of its
  // exit come after the exit's announcement); its kernel entry goes at once.
  void retire(int32_t pid);
  void retire_due();
  struct Retiring {
    std::chrono::steady_clock::time_point when;
    int32_t pid;
    uint64_t count;
  };
  std::deque<Retiring> retiring_;
  std::unordered_map<int32_t, uint64_t> retiring_pids_;  // pid -> its retire() count
  uint64_t retirements_ = 0;
  void next_generation();
  void publish_counters();

  mutable std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<Op> ops_;
  bool busy_ = false, stop_ = false;
  std::vector<model::Counter> counters_;  // published by the loading thread after each op
  std::vector<std::string> failures_;

  uint64_t no_room_ = 0;
  std::unique_ptr<unwind::TableCache> cache_;  // before tables_, which uses it
  unwind::TableStore store_;
  unwind::ProcessTables tables_;
  uint64_t entries_written_ = 0;
  uint32_t serial_ = 0;  // of the last process entry written, any process's: the BPF rule cache's
                         // key (it names the process too)
  // For unwind_copy: held by the loading thread while it changes tables or entries. The rules
  // and slots as written (the BPF maps' copies), the rows and pages mapped read-only.
  std::mutex tables_mu_;
  std::vector<unwind::PackedRule> rules_copy_;
  std::vector<unwind::TableSlot> slots_copy_;
  std::span<const unwind::PackedRow> rows_view_;
  std::span<const unwind::PackedPage> pages_view_;
  size_t rows_bytes_ = 0, pages_bytes_ = 0;
  Listener listener_;
  std::thread worker_;  // last: started when everything it uses exists
};

}  // namespace gp::record_tool
