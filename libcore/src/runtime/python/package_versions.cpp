// Package and version of Python files (package_versions.h).
#include "runtime/python/package_versions.h"

#include "gp/util/ascii.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

namespace gp::runtime::python {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::optional<std::string> slurp(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string out;
  char buf[65536];
  while (out.size() < limit && in.read(buf, sizeof buf).gcount() > 0)
    out.append(buf, static_cast<size_t>(std::min<std::streamsize>(
                        in.gcount(), static_cast<std::streamsize>(limit - out.size()))));
  return out;
}

// Splits a path into its parts, dropping empty ones and "." (pathlib's normalisation; ".."
// stays, as pathlib keeps it).
std::vector<std::string> path_parts(std::string_view p) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    i = j + 1;
  }
  return parts;
}

std::string join_parts(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// The first field of a RECORD line (CSV: quoted when it holds a comma or a quote).
std::string first_csv_field(std::string_view line) {
  if (line.empty() || line.front() != '"') return std::string(line.substr(0, line.find(',')));
  std::string out;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] != '"') {
      out += line[i];
    } else if (i + 1 < line.size() && line[i + 1] == '"') {
      out += '"';
      ++i;
    } else {
      break;
    }
  }
  return out;
}

// "Name" and "Version" of an email-style metadata file (METADATA, PKG-INFO): header lines up
// to the first empty one.
void read_metadata(const std::string& text, std::string& name, std::string& version) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    auto value = [&](std::string_view key) -> std::optional<std::string> {
      if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0) return std::nullopt;
      std::string v = line.substr(key.size());
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t") + 1);
      return v;
    };
    if (auto v = value("Name:"); v && name.empty()) name = *v;
    if (auto v = value("Version:"); v && version.empty()) version = *v;
  }
}

// One distribution's files, relative to its packages directory.
std::vector<std::string> listed_files(const std::string& info_dir, const std::string& info_name,
                                      bool egg_info) {
  constexpr size_t kMaxList = 64u << 20;
  std::vector<std::string> files;
  if (auto record = slurp(info_dir + "/RECORD", kMaxList)) {
    std::istringstream in(*record);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::string path = join_parts(path_parts(first_csv_field(line)));
      if (!path.empty()) files.push_back(std::move(path));
    }
    return files;
  }
  if (!egg_info) return files;
  auto legacy = slurp(info_dir + "/installed-files.txt", kMaxList);
  if (!legacy) return files;
  // Entries are relative to the .egg-info directory: "../pkg/mod.py" is "pkg/mod.py" (pip's
  // _convert_legacy_entry, with the info directory one part below the packages directory).
  std::istringstream in(*legacy);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> entry = path_parts(line);
    std::vector<std::string> info{info_name};
    size_t e = 0;
    while (e < entry.size() && entry[e] == "..") {
      if (info.empty() || info.back() == "..") info.push_back("..");
      else info.pop_back();
      ++e;
    }
    info.insert(info.end(), entry.begin() + static_cast<std::ptrdiff_t>(e), entry.end());
    files.push_back(join_parts(info));
  }
  return files;
}

// Mount namespace of a process ("mnt:[4026531841]"), "" when unknown: packages directories
// are cached per namespace, since the same path is the same files there.
std::string mount_namespace(const std::string& proc_root, pid_t pid) {
  char buf[64] = {};
  std::string link = proc_root + "/" + std::to_string(pid) + "/ns/mnt";
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Shared by every target thread of the run.
struct Caches {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const FileIndex>> dirs;  // "ns|dir" → index
  std::map<std::string, std::optional<std::string>> versions;    // "dev:ino" → version
};

Caches& caches() {
  static Caches c;
  return c;
}

std::shared_ptr<const FileIndex> index_of(const std::string& ns, const std::string& root,
                                          const std::string& dir) {
  std::string key = ns + "|" + dir;
  Caches& c = caches();
  if (!ns.empty()) {
    std::lock_guard lock(c.mu);
    if (auto it = c.dirs.find(key); it != c.dirs.end()) return it->second;
  }
  auto index = std::make_shared<const FileIndex>(read_packages_dir(root, dir));
  if (!ns.empty()) {
    std::lock_guard lock(c.mu);
    c.dirs.emplace(key, index);
  }
  return index;
}

// The interpreter's file as this process can open it: libpython when mapped, else the exe.
std::string interpreter_file(const Target& t, const std::string& proc_root) {
  for (const auto& lib : t.libraries) {
    std::string_view base = lib;
    base = base.substr(base.rfind('/') + 1);
    if (base.starts_with("libpython") && base.find(".so") != std::string_view::npos)
      return proc_root + "/" + std::to_string(t.pid) + "/root" + lib;
  }
  return proc_root + "/" + std::to_string(t.pid) + "/exe";
}

std::optional<std::string> interpreter_version(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  std::string key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  Caches& c = caches();
  {
    std::lock_guard lock(c.mu);
    if (auto it = c.versions.find(key); it != c.versions.end()) return it->second;
  }
  constexpr size_t kMaxBinary = 256u << 20;
  auto bytes = slurp(path, kMaxBinary);
  std::optional<std::string> version = bytes ? python_version_in_binary(*bytes) : std::nullopt;
  std::lock_guard lock(c.mu);
  c.versions.emplace(key, version);
  return version;
}

}  // namespace

std::optional<std::string> packages_dir(std::string_view file) {
  if (file.empty() || file.front() != '/') return std::nullopt;
  for (std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    size_t at = file.rfind(marker);
    if (at != std::string_view::npos) return std::string(file.substr(0, at + marker.size()));
  }
  return std::nullopt;
}

bool is_standard_library(std::string_view file) {
  // "/python" digit "." digit [digit] "/", with no site-/dist-packages after it.
  for (size_t at = file.find("/python"); at != std::string_view::npos;
       at = file.find("/python", at + 1)) {
    size_t i = at + 7;
    if (i + 3 > file.size() || !util::is_ascii_digit(file[i]) || file[i + 1] != '.' ||
        !util::is_ascii_digit(file[i + 2]))
      continue;
    i += 3;
    if (i < file.size() && util::is_ascii_digit(file[i])) ++i;
    if (i >= file.size() || file[i] != '/') continue;
    std::string_view rest = file.substr(i + 1);
    if (rest.find("site-packages") == std::string_view::npos &&
        rest.find("dist-packages") == std::string_view::npos)
      return true;
  }
  return false;
}

std::map<std::string, std::string> read_packages_dir(const std::string& root,
                                                     const std::string& dir) {
  std::map<std::string, std::string> out;
  std::string host_dir = root + dir;
  DIR* d = ::opendir(host_dir.c_str());
  if (d == nullptr) return out;
  std::vector<std::string> infos;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (ends_with(name, ".dist-info") || ends_with(name, ".egg-info")) infos.emplace_back(name);
  }
  ::closedir(d);
  for (const std::string& info : infos) {
    const bool egg = ends_with(info, ".egg-info");
    std::string info_dir = host_dir + (host_dir.ends_with('/') ? "" : "/") + info;
    struct stat st {};
    if (::stat(info_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    std::string name, version;
    constexpr size_t kMaxMetadata = 1u << 20;
    auto meta = slurp(info_dir + (egg ? "/PKG-INFO" : "/METADATA"), kMaxMetadata);
    if (!meta && !egg) meta = slurp(info_dir + "/PKG-INFO", kMaxMetadata);
    if (!meta) continue;  // gProfiler names a package only from its metadata
    read_metadata(*meta, name, version);
    // "name-version.dist-info" / "name-version[-pyX.Y].egg-info" when a field is missing.
    std::string stem = info.substr(0, info.rfind('.'));
    size_t dash = stem.find('-');
    if (name.empty()) name = stem.substr(0, dash);
    if (version.empty() && dash != std::string::npos)
      version = stem.substr(dash + 1, stem.find('-', dash + 1) - dash - 1);
    if (name.empty() || version.empty()) continue;
    std::string label = name + "==" + version;
    for (const std::string& f : listed_files(info_dir, info, egg)) {
      std::string prefix = dir.ends_with('/') ? dir : dir + "/";
      out.emplace(prefix + f, label);
    }
  }
  return out;
}

std::optional<std::string> python_version_in_binary(std::string_view bytes) {
  std::optional<std::string> found;
  for (size_t i = 1; i + 5 < bytes.size(); ++i) {
    char major = bytes[i];
    if ((major != '2' && major != '3') || util::is_ascii_digit(bytes[i - 1]) || bytes[i + 1] != '.')
      continue;
    size_t j = i + 2;
    size_t minor_start = j;
    while (j < bytes.size() && util::is_ascii_digit(bytes[j]) && j - minor_start < 3) ++j;
    size_t minor_len = j - minor_start;
    if (minor_len == 0 || minor_len > 2 || j >= bytes.size() || bytes[j] != '.') continue;
    // 2.7 and 3.5 - 3.19 (gProfiler's pattern stops at 3.12; other "3.x.y" strings such as
    // "3.2.0" occur in CPython's binary too).
    std::string_view minor = bytes.substr(minor_start, minor_len);
    if (major == '2' && minor != "7") continue;
    if (major == '3' && (minor_len == 1 ? minor[0] < '5' : minor[0] != '1')) continue;
    size_t micro_start = ++j;
    while (j < bytes.size() && util::is_ascii_digit(bytes[j]) && j - micro_start < 3) ++j;
    size_t micro_len = j - micro_start;
    if (micro_len == 0 || micro_len > 2 || j >= bytes.size() || bytes[j] != '\0') continue;
    if (found) return std::nullopt;  // more than one: gProfiler gives no version then
    found = std::string(bytes.substr(i, j - i));
  }
  return found;
}

bool takes_package_label(std::string_view file) {
  return ends_with(file, ".py") && !file.empty() && file.front() == '/' &&
         file.find(')') == std::string_view::npos;
}

PackageLabels::PackageLabels(pid_t pid, std::string interpreter, const std::string& proc_root)
    : root_(proc_root + "/" + std::to_string(pid) + "/root"),
      ns_(mount_namespace(proc_root, pid)),
      interpreter_(std::move(interpreter)) {}

PackageLabels::~PackageLabels() = default;

const std::string& PackageLabels::of(const std::string& file) {
  auto [it, fresh] = labels_.try_emplace(file);
  if (!fresh || !takes_package_label(file)) return it->second;
  if (is_standard_library(file)) {
    if (!python_version_) python_version_ = interpreter_version(interpreter_);
    if (*python_version_) it->second = "standard-library==" + **python_version_;
  }
  if (auto dir = packages_dir(file)) {
    auto& index = dirs_[*dir];
    if (!index) index = index_of(ns_, root_, *dir);
    if (auto hit = index->find(file); hit != index->end()) it->second = hit->second;
  }
  return it->second;
}

void add_package_versions(const Target& target, Profile& profile, const std::string& proc_root) {
  PackageLabels labels(target.pid, interpreter_file(target, proc_root), proc_root);
  for (Stack& st : profile.stacks) {
    for (Frame& f : st.frames) {
      // gProfiler's frame pattern: the label goes only on "(<file>.py:<line>)".
      if (f.kind != model::FrameKind::python || (f.start_line == 0 && f.line == 0)) continue;
      if (const std::string& label = labels.of(f.file); !label.empty()) f.package = label;
    }
  }
}

}  // namespace gp::runtime::python
