#pragma once
// gp-profile's local output files (gprofiler.md §10): profile_<ts>.col and profile_<ts>.html
// in --output-dir, the relative symlinks last_profile.col and last_flamegraph.html re-pointed
// atomically (a temporary link renamed over the old one), and --rotating-output, which
// deletes the previous target whenever a link moves.

#include <chrono>
#include <filesystem>
#include <string>

#include "gp/util/result.h"

namespace gp::profile {

inline constexpr const char* kLastProfileLink = "last_profile.col";
inline constexpr const char* kLastFlamegraphLink = "last_flamegraph.html";

// UTC "YYYY-MM-DDTHH:MM:SS", no fraction and no zone: gProfiler's file stamp and the Studio's
// naive start/end time format.
std::string utc_stamp(std::chrono::system_clock::time_point t);

// "profile_<stamp>", made unique in `dir`: when a .col or .html of that stem exists already
// (two sessions ending in the same second), "_2", "_3", ... is appended.
std::string profile_stem(const std::filesystem::path& dir, const std::string& stamp);

// Moves `src` into `dir` as `name` (rename; copy + rename when `dir` is on another file
// system, so `name` never appears half written), then points `dir/link` at `name` (relative)
// through `link.tmp` + rename. With `rotate`, the file the link pointed at before is deleted
// when it is a different file in `dir`.
Status publish(const std::filesystem::path& src, const std::filesystem::path& dir,
               const std::string& name, const std::string& link, bool rotate);

}  // namespace gp::profile
