// Node target facts and the placement of gp's addon (see node_target.h).
#include "runtime/node/node_target.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "proc/proc_files.h"

namespace gp::runtime::node {
namespace {

constexpr const char* kAddonName = "gp_node_perfmap.node";

std::string normalized(std::string_view arg) {
  std::string s(arg.substr(0, arg.find('=')));
  for (size_t i = 2; i < s.size(); ++i) {
    if (s[i] == '_') s[i] = '-';  // V8 flags accept both spellings
  }
  return s;
}

std::string flag_in(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    const std::string n = normalized(a);
    if (n == "--perf-basic-prof" || n == "--perf-basic-prof-only-functions") return n;
  }
  return {};
}

// Node's own options: the arguments before the script (or -e/-p code). Options that take a
// separate value skip it.
std::vector<std::string> node_options_in_cmdline(const std::vector<std::string>& cmdline) {
  static const char* kWithValue[] = {
      "-r", "--require",    "--import", "--loader",       "--experimental-loader",
      "-C", "--conditions", "--title",  "--inspect-port", "--env-file"};
  std::vector<std::string> out;
  for (size_t i = 1; i < cmdline.size(); ++i) {
    const std::string& a = cmdline[i];
    if (a.empty() || a[0] != '-' || a == "-" || a == "--") break;
    out.push_back(a);
    if (a == "-e" || a == "--eval" || a == "-p" || a == "--print") break;
    for (const char* v : kWithValue) {
      if (a == v) ++i;
    }
  }
  return out;
}

bool readable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

std::string exe_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string exe(buf, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

bool same_root(const Target& target) {
  struct stat ours {
  }, theirs{};
  const std::string root =
      target.root.empty() ? "/proc/" + std::to_string(target.pid) + "/root" : target.root;
  return ::stat("/", &ours) == 0 && ::stat((root + "/").c_str(), &theirs) == 0 &&
         ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

Status copy_file_to(int dir_fd, const std::string& from) {
  proc::UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return make_error("cannot open '" + from + "': " + std::strerror(errno));
  proc::UniqueFd out(
      ::openat(dir_fd, kAddonName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out.valid())
    return make_error(std::string("cannot create the addon copy: ") + std::strerror(errno));
  char buf[65536];
  ssize_t n = 0;
  while ((n = ::read(in.get(), buf, sizeof buf)) > 0) {
    if (::write(out.get(), buf, static_cast<size_t>(n)) != n)
      return make_error(std::string("cannot write the addon copy: ") + std::strerror(errno));
  }
  if (n < 0) return make_error(std::string("cannot read the addon: ") + std::strerror(errno));
  ::fchmod(out.get(), 0644);  // the umask must not hide it from a non-root target
  return ok_status();
}

}  // namespace

std::string perf_map_flag(const std::vector<std::string>& cmdline,
                          const std::string& node_options) {
  std::string flag = flag_in(node_options_in_cmdline(cmdline));
  if (!flag.empty()) return flag;
  std::vector<std::string> env_args;
  for (const std::string& w : proc::split(node_options, ' ')) {
    if (!w.empty()) env_args.push_back(w);
  }
  return flag_in(env_args);
}

std::string node_options_of(int32_t pid) {
  auto env = proc::read_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
  if (!env) return {};
  for (const std::string& var : proc::split(*env, '\0')) {
    if (var.rfind("NODE_OPTIONS=", 0) == 0) return var.substr(13);
  }
  return {};
}

Result<std::string> find_node_addon() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("GP_NODE_ADDON"); env != nullptr && *env != '\0')
    tried.push_back(env);
  const std::string dir = exe_dir();
  if (!dir.empty()) {
    tried.push_back(dir + "/../lib/gp/" + kAddonName);
    tried.push_back(dir + "/" + kAddonName);
  }
#ifdef GP_NODE_ADDON_BUILD_PATH
  tried.push_back(GP_NODE_ADDON_BUILD_PATH);
#endif
#ifdef GP_NODE_ADDON_INSTALL_PATH
  tried.push_back(GP_NODE_ADDON_INSTALL_PATH);
#endif
  std::string list;
  for (const std::string& p : tried) {
    if (readable_file(p)) return p;
    list += (list.empty() ? "" : ", ") + p;
  }
  return make_error("gp's node addon (" + std::string(kAddonName) +
                    ") is not installed (looked in " + list + ")");
}

Result<PlacedAddon> place_addon(const Target& target, const std::string& addon) {
  PlacedAddon placed;
  if (same_root(target)) {
    placed.path_in_target = addon;
    return placed;
  }
  const std::string root = "/proc/" + std::to_string(target.pid) + "/root";
  proc::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid())
    return make_error(std::string("cannot open the process's root: ") + std::strerror(errno));
  placed.tmp_dir = proc::UniqueFd(
      ::openat(root_fd.get(), "tmp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!placed.tmp_dir.valid())
    return make_error(std::string("cannot open the process's /tmp: ") + std::strerror(errno));
  uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) return make_error("getrandom failed");
  char name[40];
  std::snprintf(name, sizeof name, "gp-node-%016llx", static_cast<unsigned long long>(nonce));
  // mkdirat fails on any existing name (a planted link included): the directory is ours.
  if (::mkdirat(placed.tmp_dir.get(), name, 0755) != 0)
    return make_error(std::string("cannot create a directory in the process's /tmp: ") +
                      std::strerror(errno));
  placed.copy_dir = name;
  proc::UniqueFd dir(
      ::openat(placed.tmp_dir.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  ::fchmod(dir.get(), 0755);
  Status copied =
      dir.valid() ? copy_file_to(dir.get(), addon) : make_error("cannot open the new directory");
  if (!copied) {
    remove_placed_addon(placed);
    return copied.error();
  }
  placed.path_in_target = "/tmp/" + placed.copy_dir + "/" + kAddonName;
  return placed;
}

void remove_placed_addon(PlacedAddon& placed) {
  if (!placed.tmp_dir.valid() || placed.copy_dir.empty()) return;
  proc::UniqueFd dir(::openat(placed.tmp_dir.get(), placed.copy_dir.c_str(),
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.valid()) ::unlinkat(dir.get(), kAddonName, 0);
  ::unlinkat(placed.tmp_dir.get(), placed.copy_dir.c_str(), AT_REMOVEDIR);
  placed.copy_dir.clear();
}

std::string failure_reason(int32_t pid, std::string fallback) {
  // A zombie still has its /proc entry: look at its state too.
  auto stat = proc::read_file("/proc/" + std::to_string(pid) + "/stat", 4096);
  const size_t paren = stat ? stat->rfind(')') : std::string::npos;
  if (!stat ||
      (paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z'))
    return "process went down during profiling";
  return fallback;
}

}  // namespace gp::runtime::node
