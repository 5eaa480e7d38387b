// gp-profile's output directory: timestamped files, last_* links, rotation (gprofiler.md §10).
#include "gp/profile/output.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <system_error>

namespace gp::profile {
namespace fs = std::filesystem;
namespace {

Error fs_error(const std::string& what, const fs::path& object, const std::error_code& ec) {
  return make_error(what + " '" + object.string() + "': " + ec.message());
}

// rename(), or copy to a hidden temporary in `to`'s directory and rename that, when `from` is
// on another file system.
Status move_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) return ok_status();
  if (ec != std::errc::cross_device_link) return fs_error("cannot move to", to, ec);
  fs::path tmp = to.parent_path() / ("." + to.filename().string() + ".tmp");
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) return fs_error("cannot write", tmp, ec);
  fs::rename(tmp, to, ec);
  if (ec) {
    fs::remove(tmp);
    return fs_error("cannot move to", to, ec);
  }
  fs::remove(from, ec);
  return ok_status();
}

}  // namespace

std::string utc_stamp(std::chrono::system_clock::time_point t) {
  time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm {};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string profile_stem(const fs::path& dir, const std::string& stamp) {
  std::string base = "profile_" + stamp;
  std::string stem = base;
  std::error_code ec;
  for (int n = 2; fs::exists(dir / (stem + ".col"), ec) || fs::exists(dir / (stem + ".html"), ec);
       ++n) {
    stem = base + "_" + std::to_string(n);
  }
  return stem;
}

Status publish(const fs::path& src, const fs::path& dir, const std::string& name,
               const std::string& link, bool rotate) {
  fs::path target = dir / name;
  if (auto moved = move_file(src, target); !moved) return moved.error();
  fs::path link_path = dir / link;
  std::error_code ec;
  fs::path previous;
  if (fs::is_symlink(fs::symlink_status(link_path, ec))) previous = fs::read_symlink(link_path, ec);
  fs::path tmp = dir / (link + ".tmp");
  fs::remove(tmp, ec);
  fs::create_symlink(name, tmp, ec);  // relative: the directory can move
  if (ec) return fs_error("cannot create link", tmp, ec);
  fs::rename(tmp, link_path, ec);  // atomic: readers see the old or the new link
  if (ec) {
    fs::remove(tmp);
    return fs_error("cannot update link", link_path, ec);
  }
  // Only a plain name of this directory is ours to delete (a link someone re-pointed at
  // /etc/passwd must not make gp-profile delete it).
  if (rotate && !previous.empty() && previous.filename() == previous && previous != name) {
    fs::remove(dir / previous, ec);
  }
  return ok_status();
}

}  // namespace gp::profile
