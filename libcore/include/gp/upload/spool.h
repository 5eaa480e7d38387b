#pragma once
// gp-upload's spool directory: copies of profiles that could not be sent (sent first on the
// next run, then removed) and the Studio's gpid, so a host keeps its profiler identity across
// runs. The user's input files are never touched; only the copies here are.

#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

namespace gp::upload {

class Spool {
 public:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}

  // Creates the directory (and parents) when missing.
  Status init() const;
  // Spooled profiles, oldest first.
  std::vector<std::string> pending() const;
  // Writes a copy of `content` (atomically: temp file then rename); returns its path.
  Result<std::string> keep(std::string_view source_name, std::string_view content) const;
  Status remove(const std::string& path) const;

  std::string load_gpid() const;  // "" when none was saved
  Status save_gpid(std::string_view gpid) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace gp::upload
