// Discovery of runtime processes from procfs (gp/runtime/discovery.h).
#include "gp/runtime/discovery.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

#include "gp/proc/process.h"

namespace gp::runtime {
namespace {

std::string_view basename_of(std::string_view path) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.substr(path.size() - kDeleted.size()) == kDeleted) {
    path.remove_suffix(kDeleted.size());
  }
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// gProfiler's _PYTHON_BIN_RE: python, python3, python3.11.
bool is_python_exe(std::string_view name) {
  static const std::regex re("^python([23](\\.[0-9]{1,2})?)?$");
  return std::regex_match(name.begin(), name.end(), re);
}

bool is_php_exe(std::string_view name) {
  static const std::regex re("^php([0-9]+(\\.[0-9]+)?)?(-fpm.*|-cgi.*)?$");
  return std::regex_match(name.begin(), name.end(), re);
}

bool is_ruby_exe(std::string_view name) {
  static const std::regex re("^ruby([0-9]+(\\.[0-9]+)*)?$");
  return std::regex_match(name.begin(), name.end(), re);
}

struct LibraryRule {
  Runtime runtime;
  bool (*matches)(std::string_view base);
};

// In priority order: a JVM that embeds Python is a Java process, as gProfiler's checks run.
const LibraryRule kLibraryRules[] = {
    {Runtime::java, [](std::string_view b) { return b == "libjvm.so"; }},
    {Runtime::dotnet, [](std::string_view b) { return b == "libcoreclr.so"; }},
    {Runtime::python,
     [](std::string_view b) {
       return (starts_with(b, "libpython3") || starts_with(b, "libpython2")) &&
              b.find(".so") != std::string_view::npos;
     }},
    {Runtime::node, [](std::string_view b) { return starts_with(b, "libnode.so"); }},
    {Runtime::ruby, [](std::string_view b) { return starts_with(b, "libruby"); }},
    {Runtime::php, [](std::string_view b) { return starts_with(b, "libphp"); }},
};

std::optional<Runtime> runtime_of_exe(std::string_view exe) {
  std::string_view b = basename_of(exe);
  if (is_python_exe(b)) return Runtime::python;
  if (b == "node" || b == "nodejs") return Runtime::node;
  if (is_ruby_exe(b)) return Runtime::ruby;
  if (is_php_exe(b)) return Runtime::php;
  return std::nullopt;
}

std::string proc_path(const std::string& root, pid_t pid, const char* leaf) {
  return root + "/" + std::to_string(pid) + "/" + leaf;
}

std::string read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// File paths of /proc/PID/maps (the sixth column), each once.
std::vector<std::string> mapped_paths(pid_t pid, const std::string& root) {
  std::ifstream in(proc_path(root, pid, "maps"));
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode path: the path starts after five fields.
    size_t pos = 0;
    for (int field = 0; field < 5 && pos != std::string::npos; ++field) {
      pos = line.find(' ', pos);
      if (pos != std::string::npos) pos = line.find_first_not_of(' ', pos);
    }
    if (pos == std::string::npos || line[pos] != '/') continue;
    std::string path = line.substr(pos);
    if (seen.insert(path).second) out.push_back(std::move(path));
  }
  return out;
}

std::string runtime_list_text(const std::set<Runtime>& runtimes) {
  static const char* kNames[] = {"Java", "Python", "Ruby", "PHP", ".NET", "Node"};
  std::string s;
  for (Runtime r : runtimes) {
    if (!s.empty()) s += ", ";
    s += kNames[static_cast<int>(r)];
  }
  return s.empty() ? "runtime" : s;
}

}  // namespace

std::optional<Runtime> classify_process(std::string_view exe,
                                        const std::vector<std::string>& mapped,
                                        std::vector<std::string>* runtime_libraries) {
  for (const LibraryRule& rule : kLibraryRules) {
    bool found = false;
    for (const std::string& path : mapped) {
      if (!rule.matches(basename_of(path))) continue;
      found = true;
      if (runtime_libraries != nullptr) runtime_libraries->push_back(path);
    }
    if (found) return rule.runtime;
  }
  return runtime_of_exe(exe);
}

std::vector<std::string> read_cmdline(pid_t pid, const std::string& proc_root) {
  std::ifstream in(proc_path(proc_root, pid, "cmdline"), std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

std::string read_comm(pid_t pid, const std::string& proc_root) {
  std::ifstream in(proc_path(proc_root, pid, "comm"));
  std::string comm;
  std::getline(in, comm);
  return comm;
}

std::optional<StatInfo> read_stat(pid_t pid, const std::string& proc_root) {
  std::ifstream in(proc_path(proc_root, pid, "stat"));
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The comm field may hold spaces and parentheses: the fields start after the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  StatInfo st;
  std::string skip;
  unsigned long flags = 0;
  fields >> st.state >> st.ppid;
  for (int i = 0; i < 4; ++i) fields >> skip;  // pgrp session tty_nr tpgid
  fields >> flags;
  for (int i = 0; i < 12; ++i) fields >> skip;  // minflt .. nice, num_threads, itrealvalue
  fields >> st.start_ticks;
  if (!fields) return std::nullopt;
  st.kernel_thread = (flags & 0x00200000UL) != 0;  // PF_KTHREAD
  st.exiting = (flags & 0x00000004UL) != 0;        // PF_EXITING
  return st;
}

std::string own_helper_reason(pid_t pid, std::string_view exe, const std::string& proc_root) {
  std::ifstream in(proc_path(proc_root, pid, "environ"), std::ios::binary);
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = std::string(kSpawnedEnv) + "=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (std::string_view(env).substr(at, key.size()) == key)
      return "started by " + env.substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  std::string_view name = basename_of(exe);
  size_t slash = exe.rfind('/');
  if (!name.empty() && name != "java" && slash != std::string_view::npos) {
    // The launcher's directory as the process sees it (containers: through its root). A JDK's
    // bin/java is a file; /usr/bin/java is an alternatives link beside every other program.
    std::string java =
        proc_path(proc_root, pid, "root") + std::string(exe.substr(0, slash)) + "/java";
    struct stat st {};
    if (::lstat(java.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0)
      return "a JDK tool (" + std::string(name) + "), not an application";
  }
  return "";
}

Status check_php_proc_filter(const std::string& filter) {
  try {
    std::regex re(filter, std::regex::extended);
  } catch (const std::regex_error& e) {
    return make_error("invalid --php-proc-filter '" + filter + "': " + e.what());
  }
  return ok_status();
}

bool php_proc_filter_matches(const std::string& filter, const std::string& comm) {
  if (filter.empty()) return true;
  try {
    return std::regex_search(comm, std::regex(filter, std::regex::extended));
  } catch (const std::regex_error&) {
    return true;
  }
}

Result<std::optional<Target>> inspect_process(pid_t pid, const DiscoveryOptions& o) {
  auto st = read_stat(pid, o.proc_root);
  if (!st) return make_error("no such process");
  if (st->kernel_thread || st->state == 'Z' || st->state == 'X') return std::optional<Target>();
  Target t;
  t.pid = pid;
  t.exe = read_link(proc_path(o.proc_root, pid, "exe"));
  auto runtime = classify_process(t.exe, mapped_paths(pid, o.proc_root), &t.libraries);
  if (!runtime && o.python_pids.count(pid) != 0) runtime = Runtime::python;
  if (!runtime || !o.runtimes.count(*runtime)) return std::optional<Target>();
  if (!own_helper_reason(pid, t.exe, o.proc_root).empty()) return std::optional<Target>();
  t.runtime = *runtime;
  t.comm = read_comm(pid, o.proc_root);
  if (t.runtime == Runtime::php && !php_proc_filter_matches(o.php_proc_filter, t.comm)) {
    return std::optional<Target>();
  }
  t.cmdline = read_cmdline(pid, o.proc_root);
  t.root = proc_path(o.proc_root, pid, "root");
  t.discovered = std::chrono::steady_clock::now();
  if (read_stat(pid, o.proc_root) == std::nullopt) return make_error("no such process");
  return std::optional<Target>(std::move(t));
}

ProcessWatcher::ProcessWatcher(DiscoveryOptions options, std::vector<pid_t> pids)
    : options_(std::move(options)), pids_(std::move(pids)) {
  if (options_.self == 0) options_.self = ::getpid();
}

bool ProcessWatcher::is_own(pid_t pid, std::map<pid_t, pid_t>& parents) const {
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    if (pid == options_.self) return true;
    auto it = parents.find(pid);
    if (it == parents.end()) {
      auto st = read_stat(pid, options_.proc_root);
      it = parents.emplace(pid, st ? st->ppid : 0).first;
    }
    pid = it->second;
  }
  return false;
}

std::optional<Target> ProcessWatcher::look(pid_t pid, unsigned long long start_ticks) {
  Seen& s = seen_[pid];
  if (s.start_ticks != start_ticks) s = Seen{start_ticks, 0, false};
  if (s.target || s.looks >= 3) return std::nullopt;
  ++s.looks;
  auto r = inspect_process(pid, options_);
  if (!r || !*r) return std::nullopt;
  s.target = true;
  return std::move(**r);
}

std::vector<Target> ProcessWatcher::scan() {
  std::vector<Target> found;
  std::map<pid_t, pid_t> parents;
  if (!pids_.empty()) {
    if (!first_) return found;
    first_ = false;
    for (pid_t pid : pids_) {
      auto r = inspect_process(pid, options_);
      if (!r) {
        rejected_.push_back({pid, "no such process"});
      } else if (is_own(pid, parents)) {
        rejected_.push_back({pid, "is gp-runtime itself or a profiler it started"});
      } else if (std::string why = own_helper_reason(
                     pid, read_link(proc_path(options_.proc_root, pid, "exe")), options_.proc_root);
                 !*r && !why.empty()) {
        rejected_.push_back({pid, "is gp's own helper: " + why});
      } else if (std::string comm = read_comm(pid, options_.proc_root);
                 !*r && options_.runtimes.count(Runtime::php) != 0 &&
                 classify_process(read_link(proc_path(options_.proc_root, pid, "exe")),
                                  mapped_paths(pid, options_.proc_root)) == Runtime::php &&
                 !php_proc_filter_matches(options_.php_proc_filter, comm)) {
        rejected_.push_back({pid, "a PHP process whose comm '" + comm +
                                      "' does not match --php-proc-filter '" +
                                      options_.php_proc_filter + "'"});
      } else if (!*r) {
        rejected_.push_back({pid, "not a " + runtime_list_text(options_.runtimes) +
                                      " process (comm '" + comm + "')"});
      } else {
        found.push_back(std::move(**r));
      }
    }
    return found;
  }
  first_ = false;
  std::map<pid_t, Seen> alive;
  for (int32_t pid : proc::list_processes(options_.proc_root)) {
    auto st = read_stat(pid, options_.proc_root);
    if (!st || st->kernel_thread) continue;
    if (is_own(pid, parents)) continue;
    if (auto t = look(pid, st->start_ticks)) found.push_back(std::move(*t));
    alive[pid] = seen_[pid];
  }
  seen_ = std::move(alive);  // forget exited processes: memory stays flat over long sessions
  return found;
}

}  // namespace gp::runtime
