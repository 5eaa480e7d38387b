#pragma once
// TableCache: packed unwind tables on disk, one file per binary named by its build-id, so a
// second gp-record (or a new process of a binary seen before) loads a table instead of building
// it (libLLVM: a 4 MiB read instead of ~40 ms of CPU).
//
// The directory belongs to the recorder's user and no one else: it is created 0700, refused when
// it is a symlink or writable by another user, and opened once (every entry is then reached
// through that descriptor). An entry is used only when it is a regular file of this user that no
// one else can write, not a symlink, of the expected size, carrying the build-id and file size
// asked for, with a matching checksum and a consistent table; anything else is refused, deleted,
// reported through the warning callback and counted, and the table is built again. Entries are
// written to a temporary file and renamed into place; past max_bytes the least recently used
// (oldest mtime; a hit touches its entry) are deleted. A write that fails (full or read-only
// disk) is reported once and counted. Not thread-safe.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gp/unwind/table_store.h"
#include "gp/util/result.h"

namespace gp::unwind {

// The entry format's version. It is part of each entry's name ("<build-id>.v3.gpuw"), so
// recorders of different versions sharing a host's cache keep their own entries instead of
// refusing and rewriting each other's; an old version's entries age out as least recently used.
// 3: rules deref_rsp, deref_rbp and reg (an older entry says unsupported where they hold).
constexpr uint32_t kTableEntryVersion = 3;

struct TableCacheStats {
  uint64_t hits = 0;          // tables loaded from an entry
  uint64_t misses = 0;        // no entry for the build-id
  uint64_t refused = 0;       // entries refused (and deleted when possible)
  uint64_t written = 0;       // entries written
  uint64_t write_failed = 0;  // entries that could not be written
  uint64_t evicted = 0;       // entries deleted to stay within max_bytes
};

// The on-disk form of a binary's table, for the cache and its tests: `build_id` (raw bytes) and
// the binary's size are stored and checked on decode.
std::vector<uint8_t> encode_table_entry(const std::string& build_id, uint64_t file_size,
                                        const LoadedBinary& binary);
// Error (why) when the bytes are not an intact entry for this build-id and size, or the table
// in it is inconsistent (rows naming absent rules, pages past the rows, ...).
Result<LoadedBinary> decode_table_entry(std::span<const uint8_t> bytes,
                                        const std::string& build_id, uint64_t file_size);

class TableCache {
 public:
  using Warn = std::function<void(const std::string&)>;
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{512} << 20;
  // The cache in `dir` (created with its parents when missing). When the directory cannot be
  // used (a symlink, another user's, writable by others, not creatable), warns and the cache is
  // disabled: every lookup misses and nothing is written.
  TableCache(const std::string& dir, uint64_t max_bytes, Warn warn);
  ~TableCache();
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  bool enabled() const { return dir_fd_ >= 0; }
  // The table cached for this build-id and binary size; nullopt when there is none or the entry
  // was refused.
  std::optional<LoadedBinary> load(const std::string& build_id, uint64_t file_size);
  // Writes the entry (replacing any), evicting old entries for room.
  void store(const std::string& build_id, uint64_t file_size, const LoadedBinary& binary);

  const TableCacheStats& stats() const { return stats_; }
  // The file name of this build-id's entry (hex build-id, format version, ".gpuw").
  static std::string entry_name(const std::string& build_id);

 private:
  // Opens and checks the directory; why it cannot be used, or "".
  std::string open_dir();
  void refuse(const std::string& name, const std::string& why, bool remove);
  void scan();  // the entries' sizes and ages, for eviction
  void evict_for(uint64_t bytes);

  std::string dir_;
  int dir_fd_ = -1;
  uint64_t max_bytes_;
  Warn warn_;
  bool write_warned_ = false;
  uint64_t serial_ = 0;  // of temporary files
  struct Entry {
    std::string name;
    uint64_t bytes;
    int64_t age_ns;  // mtime
  };
  std::vector<Entry> entries_;
  uint64_t total_bytes_ = 0;
  TableCacheStats stats_;
};

}  // namespace gp::unwind
