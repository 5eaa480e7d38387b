// Facts about a target JVM from procfs (see jvm_process.h).
#include "jvm_process.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gp::runtime::java {
namespace {

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// Field 22 of /proc/PID/stat (starttime), counted after the ')' that ends comm; also the state.
bool parse_stat(const std::string& stat, uint64_t& start_ticks, char& state) {
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  std::istringstream in(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && in >> field; ++i) {
    if (i == 3) state = field.empty() ? '?' : field[0];
    if (i == 22) {
      start_ticks = std::stoull(field);
      return true;
    }
  }
  return false;
}

// "Uid:\treal\teffective\tsaved\tfs": the effective one; NSpid's last value.
void parse_status(const std::string& status, JvmProcess& jvm) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    uint64_t a = 0, b = 0;
    if (key == "Uid:" && fields >> a >> b) jvm.owner.uid = static_cast<uid_t>(b);
    if (key == "Gid:" && fields >> a >> b) jvm.owner.gid = static_cast<gid_t>(b);
    if (key == "SigCgt:") {
      std::string mask;
      fields >> mask;
      // Bit SIGQUIT-1 of the hex mask: its last digit holds signals 1-4.
      char last = mask.empty() ? '0' : mask.back();
      int digit = last >= 'a' ? last - 'a' + 10 : last >= 'A' ? last - 'A' + 10 : last - '0';
      jvm.catches_sigquit = (digit & 0x4) != 0;
    }
    if (key == "NSpid:") {
      while (fields >> a) jvm.ns_pid = static_cast<pid_t>(a);
    }
  }
}

std::string read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// ".../bin/java" → "..."; "" when exe is not a java launcher.
std::string java_home_of(const std::string& exe) {
  size_t slash = exe.rfind('/');
  if (slash == std::string::npos || exe.compare(slash + 1, 4, "java") != 0) return {};
  std::string bin = exe.substr(0, slash);
  if (bin.size() < 4 || bin.compare(bin.size() - 4, 4, "/bin") != 0) return {};
  return bin.substr(0, bin.size() - 4);
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<JvmProcess> inspect_jvm(pid_t pid, const std::string& proc_root) {
  std::string dir = proc_root + "/" + std::to_string(pid);
  std::string stat, status, maps, cmdline;
  char state = '?';
  JvmProcess jvm;
  jvm.pid = pid;
  if (!read_text(dir + "/stat", stat) || !parse_stat(stat, jvm.start_ticks, state) ||
      state == 'Z' || state == 'X') {
    return make_error("process exited");
  }
  read_text(dir + "/status", status);
  parse_status(status, jvm);
  if (jvm.ns_pid == 0) jvm.ns_pid = pid;
  jvm.exe = read_link(dir + "/exe");
  const std::string deleted = " (deleted)";
  if (jvm.exe.size() > deleted.size() &&
      jvm.exe.compare(jvm.exe.size() - deleted.size(), deleted.size(), deleted) == 0) {
    jvm.exe.resize(jvm.exe.size() - deleted.size());
  }
  jvm.java_home = java_home_of(jvm.exe);
  jvm.cwd = read_link(dir + "/cwd");
  std::string self_ns = read_link(proc_root + "/self/ns/mnt");
  jvm.same_mount_ns = !self_ns.empty() && self_ns == read_link(dir + "/ns/mnt");
  read_text(dir + "/maps", maps);
  jvm.maps_libjvm = maps.find("/libjvm.so") != std::string::npos;
  if (read_text(dir + "/cmdline", cmdline)) {
    size_t start = 0;
    while (start < cmdline.size()) {
      size_t end = cmdline.find('\0', start);
      if (end == std::string::npos) end = cmdline.size();
      jvm.cmdline.push_back(cmdline.substr(start, end - start));
      start = end + 1;
    }
  }
  if (!still_running(jvm, proc_root)) return make_error("process exited");
  return jvm;
}

bool still_running(const JvmProcess& jvm, const std::string& proc_root) {
  std::string stat;
  uint64_t ticks = 0;
  char state = '?';
  if (!read_text(proc_root + "/" + std::to_string(jvm.pid) + "/stat", stat)) return false;
  if (!parse_stat(stat, ticks, state)) return false;
  return ticks == jvm.start_ticks && state != 'Z' && state != 'X';
}

bool attach_disabled(const std::vector<std::string>& cmdline) {
  bool disabled = false;
  for (const auto& arg : cmdline) {
    if (arg == "-XX:+DisableAttachMechanism") disabled = true;
    if (arg == "-XX:-DisableAttachMechanism") disabled = false;
  }
  return disabled;
}

std::pair<int, int> parse_release_java_version(const std::string& text) {
  const std::string key = "JAVA_VERSION=";
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string::npos && at != 0 && text[at - 1] != '\n')
    at += key.size();
  if (at == std::string::npos) return {0, 0};
  std::string value = text.substr(at + key.size());
  value = value.substr(0, value.find('\n'));
  value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
  // "1.8.0_392": feature 8, update 392; "17.0.15": feature 17, update 15 (the third number).
  std::vector<int> numbers;
  int update = 0;
  size_t underscore = value.find('_');
  if (underscore != std::string::npos) update = atoi(value.c_str() + underscore + 1);
  std::istringstream in(value.substr(0, underscore));
  for (std::string part; std::getline(in, part, '.');) numbers.push_back(atoi(part.c_str()));
  if (numbers.empty() || numbers[0] == 0) return {0, 0};
  if (numbers[0] == 1) return {numbers.size() > 1 ? numbers[1] : 0, update};
  return {numbers[0], numbers.size() > 2 ? numbers[2] : 0};
}

int parse_release_version(const std::string& text) {
  return parse_release_java_version(text).first;
}

std::pair<int, int> jdk_version(const JvmProcess& jvm, const std::string& proc_root) {
  if (jvm.java_home.empty()) return {0, 0};
  std::string root = proc_root + "/" + std::to_string(jvm.pid) + "/root";
  std::string text;
  if (read_text(root + jvm.java_home + "/release", text) ||
      read_text(root + jvm.java_home + "/../release", text)) {
    return parse_release_java_version(text);
  }
  return {0, 0};
}

int jdk_feature_version(const JvmProcess& jvm, const std::string& proc_root) {
  return jdk_version(jvm, proc_root).first;
}

std::vector<std::string> jdk_tool_candidates(const JvmProcess& jvm, const std::string& name) {
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (path.empty() || !is_executable_file(path)) return;
    for (const auto& p : out) {
      if (p == path) return;
    }
    out.push_back(path);
  };
  // Another mount namespace's JDK may need libraries that only exist there: use gp's own.
  if (jvm.same_mount_ns && !jvm.java_home.empty()) {
    add(jvm.java_home + "/bin/" + name);
    size_t slash = jvm.java_home.rfind('/');
    if (slash != std::string::npos && jvm.java_home.compare(slash, 4, "/jre") == 0) {
      add(jvm.java_home.substr(0, slash) + "/bin/" + name);  // JDK 8: <jdk>/jre/bin/java
    }
  }
  add(find_program(name));
  return out;
}

}  // namespace gp::runtime::java
