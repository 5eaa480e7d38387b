#pragma once
// Paths inside another process's root (/proc/PID/root): symlinks are resolved by hand,
// component by component, so a link inside a container that points at "/etc/x" means the
// container's /etc/x and never leads out of the root (a hostile container cannot make gp read
// host files by planting links).

#include <string>

namespace gp::runtime::appid_detail {

// `path` (absolute, in the process's view) with "." / ".." / symlinks resolved under `root`
// ("" = this mount namespace). Components that do not exist are kept lexically.
std::string resolve_in_root(const std::string& path, const std::string& root);

// The host path of an absolute in-process path: root + resolve_in_root(path, root).
std::string host_path(const std::string& path, const std::string& root);

}  // namespace gp::runtime::appid_detail
