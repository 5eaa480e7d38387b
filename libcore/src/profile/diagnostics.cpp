// gProfiler's --diagnostics: the process listing and the kernel log (see diagnostics.h).
#include "gp/profile/diagnostics.h"

#include <unistd.h>

#include <deque>
#include <fstream>
#include <sstream>
#include <vector>

#include "gp/proc/process.h"
#include "gp/profile/child.h"
#include "gp/util/subprocess.h"

namespace gp::profile {
namespace {

// The value of "Key:\t..." in /proc/PID/status ("" when absent): its first field.
std::string status_field(const std::string& status, const std::string& key) {
  size_t at = status.find("\n" + key + ":");
  if (at == std::string::npos) return "";
  std::istringstream line(status.substr(at + key.size() + 2, status.find('\n', at + 1) - at));
  std::string first;
  line >> first;
  return first;
}

}  // namespace

std::string process_listing(const std::string& proc_root) {
  std::string out;
  for (int32_t pid : gp::proc::list_processes(proc_root)) {
    const std::string dir = proc_root + "/" + std::to_string(pid);
    std::string status = "\n" + read_text(dir + "/status");
    if (status.size() <= 1) continue;  // gone
    std::string comm = read_text(dir + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    std::vector<char> buf(4096);
    ssize_t n = ::readlink((dir + "/exe").c_str(), buf.data(), buf.size());
    std::string exe = n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : "(none)";
    std::string cmdline = read_text(dir + "/cmdline");
    while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    std::string rss = status_field(status, "VmRSS");
    out += "pid=" + std::to_string(pid) + " ppid=" + status_field(status, "PPid") + " comm='" +
           comm + "' exe='" + exe + "' uid=" + status_field(status, "Uid") +
           " threads=" + status_field(status, "Threads") + " rss_kb=" + (rss.empty() ? "0" : rss) +
           " cmdline='" + cmdline + "'\n";
  }
  return out;
}

std::string kernel_log_tail(size_t lines) {
  gp::util::SpawnOptions spawn;
  spawn.argv = {"dmesg", "-T"};
  gp::util::RunLimits limits;
  limits.timeout = std::chrono::seconds(10);
  auto r = gp::util::run(spawn, limits);
  if (!r) return "(dmesg: " + r.error().message + ")";
  if (r->exit_code != 0) return "(dmesg " + r->describe() + ": " + r->err + ")";
  std::istringstream in(r->out);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& line : last) out += line + "\n";
  return out;
}

}  // namespace gp::profile
