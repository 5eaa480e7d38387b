// Unwind tables of a perf.data's binaries from this machine's files (see
// gp/import/perf_unwind_tables.h).

#include "gp/import/perf_unwind_tables.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "gp/elf/build_id.h"
#include "gp/symbolize/debuginfo_finder.h"
#include "gp/unwind/process_tables.h"
#include "gp/unwind/table_cache.h"

namespace gp::import {
namespace {

symbolize::FinderOptions finder_options(const BinaryTablesOptions& o) {
  symbolize::FinderOptions f;
  f.debug_dirs = o.stores;
  // A separate debug file stands for the binary only when the binary itself is missing (its
  // .debug_frame serves then).
  return f;
}

}  // namespace

class BinaryTables::Impl {
 public:
  explicit Impl(BinaryTablesOptions o) : opt_(std::move(o)), finder_(finder_options(opt_)) {}

  const PerfBinaryTable& find(const PerfBinaryQuery& q) {
    const std::string key = !q.build_id.empty() ? "b:" + q.build_id
                                                : "f:" + std::to_string(q.dev) + ":" +
                                                      std::to_string(q.inode) + ":" + q.path;
    auto [it, inserted] = entries_.try_emplace(key);
    Entry& e = it->second;
    if (inserted) {
      ++stats_.binaries;
      load(q, e);
      if (e.binary) e.answer.binary = &*e.binary;
      else ++stats_.missing;
    }
    return e.answer;
  }

  BinaryTablesStats stats_;

 private:
  struct Entry {
    std::optional<unwind::LoadedBinary> binary;
    PerfBinaryTable answer;
  };

  void load(const PerfBinaryQuery& q, Entry& e) {
    std::string& why = e.answer.why;
    symbolize::FoundFiles found = finder_.find(q.path, q.build_id);
    if (found.binary.empty()) {
      why = found.status == symbolize::FindStatus::build_id_mismatch
                  ? "'" + found.mismatched + "' is another build (its build-id differs)"
                  : std::string("not found");
      return;
    }
    int fd = ::open(found.binary.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st{};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      why = "cannot open '" + found.binary + "': " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return;
    }
    // The cache is keyed by the file's own build-id (perf records few of them).
    std::string id = q.build_id;
    if (id.empty()) {
      auto read = elf::read_build_id(fd);
      if (read) id = *read;
      const uint64_t dev = uint64_t{major(st.st_dev)} << 32 | minor(st.st_dev);
      if (q.inode != 0 && q.inode == st.st_ino && q.dev == dev) e.answer.build_id = id;
    }
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    unwind::TableCache* cache = id.empty() ? nullptr : open_cache();
    if (cache != nullptr) {
      if (auto hit = cache->load(id, size)) {
        ::close(fd);
        ++stats_.cache_hits;
        e.binary = std::move(*hit);
        return;
      }
    }
    auto loaded = unwind::load_binary(fd);
    ::close(fd);
    if (!loaded) {
      why = loaded.error().message;
      return;
    }
    ++stats_.built;
    if (cache != nullptr) cache->store(id, size, *loaded);
    e.binary = std::move(*loaded);
  }

  // The cache, opened when a first table is wanted (a recording without stack copies never
  // touches it); nullptr without one.
  unwind::TableCache* open_cache() {
    if (!cache_ && !opt_.cache_dir.empty())
      cache_ = std::make_unique<unwind::TableCache>(
          opt_.cache_dir, opt_.cache_max_bytes, [this](const std::string& why) {
            if (opt_.warn) opt_.warn(why);
          });
    return cache_.get();
  }

  BinaryTablesOptions opt_;
  symbolize::DebugInfoFinder finder_;
  std::unique_ptr<unwind::TableCache> cache_;
  std::unordered_map<std::string, Entry> entries_;  // by build-id, else by path
};

BinaryTables::BinaryTables(BinaryTablesOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
BinaryTables::~BinaryTables() = default;
const PerfBinaryTable& BinaryTables::find(const PerfBinaryQuery& binary) {
  return impl_->find(binary);
}
const BinaryTablesStats& BinaryTables::stats() const { return impl_->stats_; }

}  // namespace gp::import
