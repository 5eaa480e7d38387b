// Opening, driving and closing a Node process's inspector (see inspector.h).
#include "runtime/node/inspector.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "proc/proc_files.h"

namespace gp::runtime::node {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::set<uint64_t> socket_inodes(const std::string& dir) {
  std::set<uint64_t> inodes;
  DIR* d = ::opendir((dir + "/fd").c_str());
  if (d == nullptr) return inodes;
  while (dirent* e = ::readdir(d)) {
    char target[64];
    const std::string link = dir + "/fd/" + e->d_name;
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    const std::string_view t(target, static_cast<size_t>(n));
    uint64_t inode = 0;
    if (t.rfind("socket:[", 0) == 0 && t.back() == ']' &&
        proc::parse_u64(t.substr(8, t.size() - 9), inode)) {
      inodes.insert(inode);
    }
  }
  ::closedir(d);
  return inodes;
}

// Lines of /proc/PID/net/tcp{,6}: "sl local rem st tx:rx tr:when retrnsmt uid timeout inode".
void add_listening(const std::string& table, const std::set<uint64_t>& inodes,
                   std::set<uint16_t>& ports) {
  for (const std::string& line : proc::split(table, '\n')) {
    std::vector<std::string> f;
    for (auto& w : proc::split(line, ' ')) {
      if (!w.empty()) f.push_back(w);
    }
    uint64_t inode = 0, port = 0;
    if (f.size() < 10 || f[3] != "0A" || !proc::parse_u64(f[9], inode)) continue;
    const size_t colon = f[1].rfind(':');
    if (colon == std::string::npos || !proc::parse_u64(f[1].substr(colon + 1), port, 16)) continue;
    if (inodes.count(inode) != 0) ports.insert(static_cast<uint16_t>(port));
  }
}

// The DevTools WebSocket path of the process's (single) inspector target, from /json/list.
Result<std::string> debugger_path(int32_t pid, uint16_t port, Deadline deadline) {
  auto body = http_get(pid, port, "/json/list", deadline);
  if (!body) return body.error();
  auto doc = json::parse(*body);
  if (!doc || !doc->is_array() || doc->items.empty())
    return make_error("port " + std::to_string(port) + " does not answer as a Node inspector");
  const std::string url = doc->items.front().get_string("webSocketDebuggerUrl");
  const size_t scheme = url.find("://");
  const size_t slash = scheme == std::string::npos ? scheme : url.find('/', scheme + 3);
  if (slash == std::string::npos) return make_error("inspector gave no webSocketDebuggerUrl");
  return url.substr(slash);
}

bool is_node_exe(int32_t pid) {
  char buf[4096];
  const ssize_t n =
      ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  std::string_view exe(buf, static_cast<size_t>(n));
  if (exe.size() > 10 && exe.substr(exe.size() - 10) == " (deleted)") exe.remove_suffix(10);
  // gProfiler's rule (gprofiler.md §3.6): the exe's base name contains "node"; or an
  // embedder that maps libnode (as gp-runtime's discovery counts it).
  if (exe.substr(exe.rfind('/') + 1).find("node") != std::string_view::npos) return true;
  auto maps = proc::read_file("/proc/" + std::to_string(pid) + "/maps", 64 << 20);
  return maps && maps->find("/libnode.so") != std::string::npos;
}

// Whether the process has a handler for SIGUSR1 (the SigCgt mask of its status). A node built
// without the inspector, started with --disable-sigusr1, or a program that only calls itself
// node has none, and the signal would kill it.
bool catches_sigusr1(int32_t pid) {
  auto status = proc::read_file("/proc/" + std::to_string(pid) + "/status", 1 << 16);
  if (!status) return false;
  for (const std::string& line : proc::split(*status, '\n')) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    uint64_t mask = 0;
    std::string_view hex(line);
    hex.remove_prefix(7);
    while (!hex.empty() && (hex.front() == ' ' || hex.front() == '\t')) hex.remove_prefix(1);
    return proc::parse_u64(hex, mask, 16) && (mask & (1ull << (SIGUSR1 - 1))) != 0;
  }
  return false;
}

// SIGUSR1 kills a process that does not handle it: only ever send it to a Node that handles it.
Result<uint16_t> start_inspector(int32_t pid, const std::set<uint16_t>& before, Deadline deadline) {
  if (!is_node_exe(pid)) return make_error("process is not a node executable: SIGUSR1 not sent");
  if (!catches_sigusr1(pid))
    return make_error(
        "the process does not handle SIGUSR1 (a node without the inspector, or not node): "
        "SIGUSR1 not sent");
  if (::kill(pid, SIGUSR1) != 0)
    return make_error(std::string("cannot signal: ") + std::strerror(errno));
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
    auto now = listening_ports(pid);
    if (!now) return now.error();
    for (uint16_t p : *now) {
      if (before.count(p) == 0) return p;
    }
  }
  return make_error("the inspector did not open after SIGUSR1 (its port may be taken)");
}

}  // namespace

Result<std::set<uint16_t>> listening_ports(int32_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  int err = 0;
  auto v4 = proc::read_file(dir + "/net/tcp", 4 << 20, &err);
  if (!v4) {
    if (proc::is_gone_errno(err)) return make_error("process exited");
    return make_error("cannot read " + dir + "/net/tcp: " + v4.error().message);
  }
  const std::set<uint64_t> inodes = socket_inodes(dir);
  std::set<uint16_t> ports;
  add_listening(*v4, inodes, ports);
  if (auto v6 = proc::read_file(dir + "/net/tcp6", 4 << 20)) add_listening(*v6, inodes, ports);
  return ports;
}

Result<InspectorSession> open_inspector(int32_t pid, Deadline deadline) {
  auto before = listening_ports(pid);
  if (!before) return before.error();
  // An inspector that is already open (--inspect, an earlier SIGUSR1) is used and left open.
  for (uint16_t port : *before) {
    const auto probe = std::min(deadline, Clock::now() + milliseconds(500));
    if (auto path = debugger_path(pid, port, probe)) {
      auto ws = WebSocketClient::connect(pid, port, *path, deadline);
      if (!ws) return make_error("cannot connect to the inspector: " + ws.error().message);
      InspectorSession session(pid, port, false, std::move(*ws));
      session.watch_exit(deadline);
      return session;
    }
  }
  auto port = start_inspector(pid, *before, deadline);
  if (!port) return port.error();
  InspectorSession session(pid, *port, true, WebSocketClient());
  // From here on, session's destructor closes the inspector again whatever fails.
  Result<std::string> path = make_error("timed out");
  while (Clock::now() < deadline && !(path = debugger_path(pid, *port, deadline))) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  if (!path)
    return make_error("inspector on port " + std::to_string(*port) + ": " + path.error().message);
  auto ws = WebSocketClient::connect(pid, *port, *path, deadline);
  if (!ws) return make_error("cannot connect to the inspector: " + ws.error().message);
  session.ws_ = std::move(*ws);
  session.watch_exit(deadline);
  return session;
}

InspectorSession::InspectorSession(int32_t pid, uint16_t port, bool opened_by_us,
                                   WebSocketClient ws)
    : pid_(pid), port_(port), opened_by_us_(opened_by_us), ws_(std::move(ws)) {}

InspectorSession::InspectorSession(InspectorSession&& other) noexcept
    : pid_(other.pid_),
      port_(other.port_),
      opened_by_us_(other.opened_by_us_),
      closed_(other.closed_),
      next_id_(other.next_id_),
      ws_(std::move(other.ws_)) {
  other.closed_ = true;
}

InspectorSession::~InspectorSession() {
  if (!closed_) (void)close(Clock::now() + milliseconds(3000));
}

Result<json::Value> InspectorSession::call(std::string_view method, const json::Value& params,
                                           Deadline deadline) {
  const int64_t id = next_id_++;
  json::Value msg = json::Value::object();
  msg.set("id", json::Value::from_int(id));
  msg.set("method", json::Value::from_string(std::string(method)));
  msg.set("params", params);
  if (auto ok = ws_.send_text(json::dump(msg), deadline); !ok) return ok.error();
  while (true) {
    auto text = ws_.receive_text(deadline);
    if (!text) return make_error(std::string(method) + ": " + text.error().message);
    auto reply = json::parse(*text);
    if (!reply || !reply->is_object()) continue;  // not ours to judge: skip
    const json::Value* rid = reply->find("id");
    if (rid == nullptr || rid->as_int(-1) != id) continue;  // an event or an older reply
    if (const json::Value* err = reply->find("error"))
      return make_error(std::string(method) + ": " + err->get_string("message", "failed"));
    const json::Value* result = reply->find("result");
    return result != nullptr ? *result : json::Value::object();
  }
}

void InspectorSession::watch_exit(Deadline deadline) {
  json::Value params = json::Value::object();
  params.set("enabled", json::Value::from_bool(true));
  // Node 12+; an older Node just keeps a dying process until the session ends.
  (void)call("NodeRuntime.notifyWhenWaitingForDisconnect", params, deadline);
}

Result<bool> InspectorSession::wait(std::chrono::milliseconds duration, std::stop_token stop) {
  const auto end = Clock::now() + duration;
  while (!stop.stop_requested() && Clock::now() < end) {
    // Short slices: the stop token is polled between them.
    auto text = ws_.receive_text(std::min(end, Clock::now() + milliseconds(100)));
    if (!text) {
      if (text.error().message == kTimedOut) continue;
      return text.error();
    }
    auto msg = json::parse(*text);
    if (msg && msg->get_string("method") == "NodeRuntime.waitingForDisconnect") return true;
  }
  return false;
}

void InspectorSession::disconnect() {
  closed_ = true;
  ws_.close();
}

Result<json::Value> InspectorSession::evaluate(std::string_view expression, Deadline deadline) {
  json::Value params = json::Value::object();
  params.set("expression", json::Value::from_string(std::string(expression)));
  params.set("includeCommandLineAPI", json::Value::from_bool(true));
  params.set("returnByValue", json::Value::from_bool(true));
  auto r = call("Runtime.evaluate", params, deadline);
  if (!r) return r.error();
  if (const json::Value* ex = r->find("exceptionDetails")) {
    const json::Value* e = ex->find("exception");
    std::string why = e != nullptr ? e->get_string("description") : "";
    if (why.empty()) why = ex->get_string("text", "exception");
    return make_error(why.substr(0, why.find('\n')));
  }
  const json::Value* res = r->find("result");
  const json::Value* value = res != nullptr ? res->find("value") : nullptr;
  return value != nullptr ? *value : json::Value::null();
}

Status InspectorSession::close(Deadline deadline) {
  if (closed_) return ok_status();
  closed_ = true;
  if (!opened_by_us_) {
    ws_.close();
    return ok_status();
  }
  // inspector.close() drops this very connection, so its reply may never come: send and go.
  json::Value params = json::Value::object();
  params.set("expression", json::Value::from_string("require('inspector').close()"));
  params.set("includeCommandLineAPI", json::Value::from_bool(true));
  json::Value msg = json::Value::object();
  msg.set("id", json::Value::from_int(next_id_++));
  msg.set("method", json::Value::from_string("Runtime.evaluate"));
  msg.set("params", std::move(params));
  if (!ws_.send_text(json::dump(msg), deadline)) {
    // Never connected (or dropped): connect once more, only to close the inspector.
    auto path = debugger_path(pid_, port_, deadline);
    auto ws = path ? WebSocketClient::connect(pid_, port_, *path, deadline)
                   : Result<WebSocketClient>(path.error());
    if (ws) {
      ws_ = std::move(*ws);
      (void)ws_.send_text(json::dump(msg), deadline);
    }
  }
  (void)ws_.receive_text(std::min(deadline, Clock::now() + milliseconds(1000)));
  ws_.close();
  while (true) {
    auto ports = listening_ports(pid_);
    if (!ports || ports->count(port_) == 0) return ok_status();  // closed, or the process is gone
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return make_error("the inspector of pid " + std::to_string(pid_) +
                    " is still listening on port " + std::to_string(port_));
}

}  // namespace gp::runtime::node
