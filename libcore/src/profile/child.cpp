// gp-profile's child processes: tool lookup, spawns through gp's one spawner, stderr tails.
#include "gp/profile/child.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace gp::profile {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_tool(const std::string& name, const std::string& self_exe,
                                     const std::string& path) {
  if (auto slash = self_exe.rfind('/'); slash != std::string::npos) {
    std::string sibling = self_exe.substr(0, slash + 1) + name;
    if (is_executable_file(sibling)) return sibling;
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

Result<pid_t> spawn(const ChildSpec& spec) {
  util::SpawnOptions o;
  o.argv.push_back(spec.program);
  o.argv.insert(o.argv.end(), spec.args.begin(), spec.args.end());
  o.out = util::Stdio::file(spec.stdout_path);
  o.err = util::Stdio::file(spec.stderr_path);
  o.parent_death_signal = SIGTERM;
  auto child = util::spawn(o);
  if (!child) return child.error();
  return child->pid;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> tail_lines(const std::string& path, size_t max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(line);
    if (lines.size() > max_lines) lines.erase(lines.begin());
  }
  return lines;
}

}  // namespace gp::profile
