#include "gp/symbolize/symbol_export.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/symbolizer.h"

namespace gp::symbolize {
namespace {

Status make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    std::string prefix = path.substr(0, i);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return make_error("cannot create directory '" + prefix + "': " + std::strerror(errno));
  }
  return ok_status();
}

// Copies src to dst through a temporary file and rename, so a store never holds a half file.
Result<uint64_t> copy_file(const std::string& src, const std::string& dst) {
  int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return make_error("cannot read '" + src + "': " + std::strerror(errno));
  std::string tmp = dst + ".tmp." + std::to_string(::getpid());
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    ::close(in);
    return make_error("cannot write '" + tmp + "': " + std::strerror(errno));
  }
  std::string buf(1 << 16, '\0');
  uint64_t total = 0;
  std::string failure;
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failure = "cannot read '" + src + "': " + std::strerror(errno);
    if (n <= 0) break;
    for (ssize_t done = 0; done < n && failure.empty();) {
      ssize_t w = ::write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) failure = "cannot write '" + tmp + "': " + std::strerror(errno);
      else done += w;
    }
    if (!failure.empty()) break;
    total += static_cast<uint64_t>(n);
  }
  ::close(in);
  if (::close(out) != 0 && failure.empty())
    failure = "cannot write '" + tmp + "': " + std::strerror(errno);
  if (failure.empty() && ::rename(tmp.c_str(), dst.c_str()) != 0)
    failure = "cannot rename to '" + dst + "': " + std::strerror(errno);
  if (!failure.empty()) {
    ::unlink(tmp.c_str());
    return make_error(failure);
  }
  return total;
}

bool present_with_id(const std::string& path, const std::string& build_id) {
  auto f = ElfFile::open(path);
  return f && f->build_id() == build_id;
}

// Stores one file under `dst`; counts it. Returns the error text, "" on success.
std::string store(const std::string& src, const std::string& dst, const std::string& build_id,
                  bool check_id, ExportReport& report) {
  if (check_id ? present_with_id(dst, build_id) : ::access(dst.c_str(), R_OK) == 0) {
    ++report.files_present;
    return {};
  }
  auto dir = dst.substr(0, dst.rfind('/'));
  auto st = make_dirs(dir);
  if (!st) return st.error().message;
  auto copied = copy_file(src, dst);
  if (!copied) return copied.error().message;
  ++report.files_copied;
  report.bytes_copied += *copied;
  return {};
}

}  // namespace

Result<ExportReport> export_symbols(const std::vector<model::Session>& sessions,
                                    const FinderOptions& finder_options,
                                    const std::string& store_dir) {
  auto st = make_dirs(store_dir + "/.build-id");
  if (!st) return st.error();
  ExportReport report;
  DebugInfoFinder finder(finder_options);
  std::set<std::string> seen;
  for (const auto& s : sessions) {
    for (const auto& ref : modules_to_resolve(s, /*all=*/true)) {
      std::string key = ref.build_id.empty() ? "p" + ref.paths.front() : "b" + ref.build_id;
      if (!seen.insert(key).second) continue;
      ExportedModule m;
      m.path = ref.paths.front();
      m.build_id = ref.build_id;
      if (ref.build_id.size() < 2) {
        m.problem = "no build-id recorded";
        report.modules.push_back(std::move(m));
        continue;
      }
      FoundFiles files;
      for (const auto& p : ref.paths)
        if ((files = finder.find(p, ref.build_id)).status == FindStatus::found) break;
      if (files.status != FindStatus::found) {
        m.problem = files.status == FindStatus::build_id_mismatch
                        ? "build-id mismatch ('" + files.mismatched + "')"
                        : "no file found";
        report.modules.push_back(std::move(m));
        continue;
      }
      std::string base = store_dir + "/" + build_id_relpath(ref.build_id);
      m.problem = store(files.binary, base, ref.build_id, true, report);
      if (m.problem.empty()) m.binary = base;
      if (!files.debug.empty() && m.problem.empty()) {
        // Separate debug files have the binary's build-id too.
        m.problem = store(files.debug, base + ".debug", ref.build_id, true, report);
        if (m.problem.empty()) m.debug = base + ".debug";
      }
      report.modules.push_back(std::move(m));
    }
  }
  return report;
}

}  // namespace gp::symbolize
