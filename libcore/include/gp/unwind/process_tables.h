#pragma once
// ProcessTables: the unwind tables of each process's executable mappings, as the BPF unwinder
// wants them (bpf/profile.h: struct gp_unwind_process): for every mapping whose binary has CFI,
// its address range, the table's slot in a TableStore, and the bias that turns an address into
// an offset in the table. Tables are built once per binary (keyed by build-id, else by
// device/inode) from the file the process maps, opened through /proc/PID/map_files (the very
// file, even deleted or in another mount namespace) or /proc/PID/root; the vDSO's table comes
// from this process's own vDSO (one kernel, one image). Not thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"
#include "gp/unwind/table_cache.h"
#include "gp/unwind/table_store.h"
#include "gp/util/result.h"

namespace gp::unwind {

// bpf/profile.h: struct gp_unwind_mapping.
struct MappingTable {
  uint64_t start = 0;  // [start, end) in the process's address space
  uint64_t end = 0;
  uint64_t bias = 0;  // the table's offset of address a is a - bias
  uint32_t slot = 0;  // the table's slot in the store
  uint32_t pad = 0;
  bool operator==(const MappingTable&) const = default;
};
static_assert(sizeof(MappingTable) == 32);

// The table offset of an address in a mapping of [start, end) at `file_offset` of a binary with
// these segments and table base: the bias B with offset = address - B. False when no segment
// holds the mapping's file offset.
bool mapping_bias(const std::vector<Segment>& segments, uint64_t table_base, uint64_t start,
                  uint64_t file_offset, uint64_t* bias);

// Reads a binary (an ELF file's fd, or an image in memory) into a LoadedBinary.
Result<LoadedBinary> load_binary(int fd);
Result<LoadedBinary> load_binary(std::span<const uint8_t> image);

struct ProcessTablesStats {
  uint64_t mappings = 0;    // mappings given a table (over all updates)
  uint64_t no_table = 0;    // mappings of binaries without a usable table (frame pointers there)
  uint64_t over_limit = 0;  // mappings past kMaxMappings (frame pointers there)
  uint64_t built = 0;       // tables built from a binary's CFI (not from the cache)
  uint64_t stopped = 0;     // updates abandoned by update_unless's stop
};

class ProcessTables {
 public:
  // Opens the file behind a mapping of pid, read-only; -1 with errno when it cannot.
  using Opener = std::function<int(int32_t pid, const model::Mapping& m)>;
  // The vDSO image to build its table from (empty: the vDSO gets no table).
  ProcessTables(TableStore& store, Opener open, std::span<const uint8_t> vdso_image)
      : store_(store), open_(std::move(open)), vdso_(vdso_image) {}
  ~ProcessTables();
  // Tables of binaries with a build-id are looked up there before they are built, and written
  // there after (nullptr: none). Set before the first update; it must outlive this.
  void set_cache(TableCache* cache) { cache_ = cache; }
  ProcessTables(const ProcessTables&) = delete;
  ProcessTables& operator=(const ProcessTables&) = delete;

  // pid's entries for these mappings (any order; only executable file mappings and the vDSO are
  // used), sorted by start, at most kMaxMappings; the tables they name stay loaded until pid is
  // updated again or forgotten. `changed` tells whether they differ from pid's previous ones.
  std::vector<MappingTable> update(int32_t pid, const std::vector<model::Mapping>& mappings,
                                   bool* changed);
  // As update, asking `stop` before each mapping's table: once it answers true (pid exec'd, so
  // the mappings are of an image it no longer runs), the update is abandoned between two
  // mappings: the tables acquired so far are released, pid's entries stay as they were, and
  // nullopt is returned (a large image takes hundreds of milliseconds to build, which the new
  // image's tables would wait behind).
  std::optional<std::vector<MappingTable>> update_unless(
      int32_t pid, const std::vector<model::Mapping>& mappings, bool* changed,
      const std::function<bool()>& stop);
  // Drops pid's entries (its tables may then be evicted).
  void forget(int32_t pid);
  // pid's entries as update last gave them; nullptr when it has none.
  const std::vector<MappingTable>* entries(int32_t pid) const {
    auto it = processes_.find(pid);
    return it == processes_.end() ? nullptr : &it->second;
  }

  const ProcessTablesStats& stats() const { return stats_; }
  // Why the last binaries failed (key -> reason), for -v diagnostics; cleared by take_failures.
  std::vector<std::string> take_failures();
  static constexpr size_t kMaxMappings = 256;  // GP_UNWIND_MAX_MAPPINGS

 private:
  // m's binary's table (one more user), or an error.
  Result<TableStore::Acquired> acquire(int32_t pid, const model::Mapping& m);
  static std::string key_of(const model::Mapping& m);

  TableStore& store_;
  Opener open_;
  std::span<const uint8_t> vdso_;
  TableCache* cache_ = nullptr;
  std::unordered_map<int32_t, std::vector<MappingTable>> processes_;
  std::vector<std::string> failures_;
  ProcessTablesStats stats_;
};

// Opens a mapping's file through /proc/PID/map_files/START-END, else /proc/PID/root/PATH, else
// (the process has exited) PATH itself when it is still the mapped file (its inode, and its
// build-id when the mapping has one).
int open_mapped_file(int32_t pid, const model::Mapping& m);

// This process's own vDSO image (empty when it has none).
std::span<const uint8_t> own_vdso_image();

}  // namespace gp::unwind
