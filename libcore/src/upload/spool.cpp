// The spool directory (files named <unix-ns>-<source basename>.col, sorted = oldest first).
#include "gp/upload/spool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gp::upload {
namespace fs = std::filesystem;

namespace {

Status write_atomically(const fs::path& path, std::string_view content) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) return make_error("cannot write '" + tmp.string() + "'");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return make_error("cannot rename '" + tmp.string() + "': " + ec.message());
  return ok_status();
}

std::string safe_basename(std::string_view source) {
  std::string base = fs::path(std::string(source)).filename().string();
  for (char& c : base)
    if (c != '.' && c != '-' && c != '_' && !std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (base.empty()) base = "stdin";
  if (base.size() < 4 || base.substr(base.size() - 4) != ".col") base += ".col";
  return base;
}

}  // namespace

Status Spool::init() const {
  std::error_code ec;
  const bool created = fs::create_directories(dir_, ec);
  if (ec) return make_error("cannot create spool directory '" + dir_ + "': " + ec.message());
  if (created) ::chmod(dir_.c_str(), 0700);  // whatever the umask: the spool is private
  // Whatever is in the spool is sent with the caller's token, often root's: a directory someone
  // else can write (or swap: a symlink) would let them choose what root uploads.
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0)
    return make_error("cannot use spool directory '" + dir_ + "': " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return make_error("refused spool directory '" + dir_ +
                      "': it is a symbolic link or not a directory");
  if (st.st_uid != ::geteuid())
    return make_error("refused spool directory '" + dir_ + "': owned by uid " +
                      std::to_string(st.st_uid) + ", not by the user running gp-upload");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return make_error("refused spool directory '" + dir_ +
                      "': other users can write it (chmod go-w, or use a new directory)");
  owner_ = st.st_uid;
  return ok_status();
}

std::vector<std::string> Spool::pending(std::vector<std::string>* refused) const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() <= 4 || name.substr(name.size() - 4) != ".col") continue;
    // lstat: a planted symlink is never followed; a hard link (nlink > 1) could name a file of
    // someone else's that the owner check alone would let through.
    struct stat st {};
    std::string why;
    if (::lstat(e.path().c_str(), &st) != 0) why = std::strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (st.st_uid != owner_)
      why = "owned by uid " + std::to_string(st.st_uid) + ", not by the spool's owner";
    else if (st.st_nlink != 1) why = "it has " + std::to_string(st.st_nlink) + " hard links";
    if (why.empty()) out.push_back(e.path().string());
    else if (refused) refused->push_back("'" + e.path().string() + "': " + why);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::string> Spool::keep(std::string_view source_name, std::string_view content) const {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%020lld", static_cast<long long>(ns));
  fs::path path = fs::path(dir_) / (std::string(stamp) + "-" + safe_basename(source_name));
  if (auto st = write_atomically(path, content); !st) return st.error();
  return path.string();
}

Status Spool::remove(const std::string& path) const {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) return make_error("cannot remove '" + path + "': " + ec.message());
  return ok_status();
}

size_t Spool::trim(uint64_t max_bytes) const {
  std::vector<std::pair<std::string, uint64_t>> files;
  uint64_t total = 0;
  for (const std::string& p : pending()) {
    std::error_code ec;
    uint64_t size = fs::file_size(p, ec);
    if (ec) continue;
    files.emplace_back(p, size);
    total += size;
  }
  size_t dropped = 0;
  for (const auto& [path, size] : files) {
    if (total <= max_bytes) break;
    std::error_code ec;
    if (fs::remove(path, ec)) {
      total -= size;
      ++dropped;
    }
  }
  return dropped;
}

std::string Spool::gpid_path() const { return (fs::path(dir_) / "gpid").string(); }
std::string Spool::load_gpid() const { return load_gpid_file(gpid_path()); }
Status Spool::save_gpid(std::string_view gpid) const { return save_gpid_file(gpid_path(), gpid); }

std::string load_gpid_file(const std::string& path) {
  std::ifstream in(path);
  std::string gpid;
  std::getline(in, gpid);
  return gpid;
}

Status save_gpid_file(const std::string& path, std::string_view gpid) {
  return write_atomically(path, std::string(gpid) + "\n");
}

}  // namespace gp::upload
