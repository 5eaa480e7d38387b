// Private, self-removing work directory (work_dir.h).
#include "work_dir.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gp::runtime {
namespace {

int remove_entry(const char* path, const struct stat*, int, FTW*) {
  ::remove(path);
  return 0;
}

}  // namespace

Result<WorkDir> WorkDir::create(const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/gp-runtime-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return make_error("cannot create a work directory in '" + base + "': " + std::strerror(errno));
  }
  return WorkDir(std::string(buf.data()));
}

WorkDir::~WorkDir() {
  if (!path_.empty()) ::nftw(path_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

std::string WorkDir::subdir(const std::string& name) const {
  std::string dir = path_ + "/" + name;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return {};
  return dir;
}

}  // namespace gp::runtime
