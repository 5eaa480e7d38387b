#pragma once
// gp-upload's spool directory: copies of profiles that could not be sent (sent first on the
// next run, then removed) and the Studio's gpid, so a host keeps its profiler identity across
// runs. The user's input files are never touched; only the copies here are.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

namespace gp::upload {

class Spool {
 public:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}

  // Creates the directory (and parents) when missing. Refuses a directory that is a symbolic
  // link, is not the caller's (effective uid), or that group or others can write: what is in it
  // gets uploaded with the caller's token.
  Status init() const;
  // Spooled profiles, oldest first: regular files owned by the spool's owner with one link
  // (never followed through a symlink). Other *.col entries are left out and, when `refused`
  // is given, described there ("'PATH': why"). Call init() first.
  std::vector<std::string> pending(std::vector<std::string>* refused = nullptr) const;
  // Writes a copy of `content` (atomically: temp file then rename); returns its path.
  Result<std::string> keep(std::string_view source_name, std::string_view content) const;
  Status remove(const std::string& path) const;
  // Drops the oldest profiles until the spooled ones total at most `max_bytes`; returns how
  // many were dropped.
  size_t trim(uint64_t max_bytes) const;

  std::string load_gpid() const;  // "" when none was saved
  Status save_gpid(std::string_view gpid) const;
  std::string gpid_path() const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  mutable uint32_t owner_ = 0;  // the directory's owner, set by init()
};

// The gpid kept in a file of its own (first line; "" when the file is missing), written
// atomically.
std::string load_gpid_file(const std::string& path);
Status save_gpid_file(const std::string& path, std::string_view gpid);

}  // namespace gp::upload
