// The spool directory (files named <unix-ns>-<source basename>.col, sorted = oldest first).
#include "gp/upload/spool.h"

#include <unistd.h>

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
  fs::create_directories(dir_, ec);
  if (ec) return make_error("cannot create spool directory '" + dir_ + "': " + ec.message());
  return ok_status();
}

std::vector<std::string> Spool::pending() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > 4 && name.substr(name.size() - 4) == ".col")
      out.push_back(e.path().string());
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

std::string Spool::load_gpid() const {
  std::ifstream in(fs::path(dir_) / "gpid");
  std::string gpid;
  std::getline(in, gpid);
  return gpid;
}

Status Spool::save_gpid(std::string_view gpid) const {
  return write_atomically(fs::path(dir_) / "gpid", std::string(gpid) + "\n");
}

}  // namespace gp::upload
