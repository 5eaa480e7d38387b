#pragma once
// Node's inspector, driven from outside (private to libcore/src/runtime/node).
//
// open_inspector finds the inspector of a Node process, opening it with SIGUSR1 when it is not
// listening yet (Node's documented way to start the inspector in a running process), and
// connects to the target's DevTools WebSocket (the URL from GET /json/list). The port is found
// from the process's own listening sockets (its fds matched against /proc/PID/net/tcp of its
// network namespace), so another Node's inspector on 9229 in the same namespace is never used.
// InspectorSession::close() puts the process back as found: it closes the inspector again when
// this session opened it.

#include <sys/types.h>

#include <set>
#include <stop_token>
#include <string>
#include <string_view>

#include "gp/util/json.h"
#include "runtime/node/websocket.h"

namespace gp::runtime::node {

// TCP ports pid listens on (IPv4 and IPv6), from its socket fds.
Result<std::set<uint16_t>> listening_ports(int32_t pid);

class InspectorSession {
 public:
  InspectorSession(InspectorSession&& other) noexcept;
  InspectorSession& operator=(InspectorSession&&) = delete;
  // Closes (as close() does) when the owner did not.
  ~InspectorSession();

  // A Chrome DevTools Protocol call; the "result" object of the response. Events and other
  // responses that arrive before it are dropped.
  Result<json::Value> call(std::string_view method, const json::Value& params, Deadline deadline);
  // Runtime.evaluate of `expression` with the console's command-line API (so `require` works
  // in CommonJS and ES-module programs alike); the value (returnByValue) or the exception text.
  Result<json::Value> evaluate(std::string_view expression, Deadline deadline);

  // Waits for `duration` or a stop request. True when the process began to exit meanwhile:
  // Node does not exit while a debugger is connected ("Waiting for the debugger to
  // disconnect..."), so the owner must then disconnect() at once, never keep it alive.
  Result<bool> wait(std::chrono::milliseconds duration, std::stop_token stop);
  // Drops the connection without closing the inspector (the process is exiting).
  void disconnect();

  uint16_t port() const { return port_; }
  bool opened_by_us() const { return opened_by_us_; }
  // Disconnects; when this session opened the inspector, closes it (inspector.close()) and
  // waits until its port is gone. An error when the port stays open.
  Status close(Deadline deadline);

  friend Result<InspectorSession> open_inspector(int32_t pid, Deadline deadline);

 private:
  InspectorSession(int32_t pid, uint16_t port, bool opened_by_us, WebSocketClient ws);
  void watch_exit(Deadline deadline);
  int32_t pid_ = 0;
  uint16_t port_ = 0;
  bool opened_by_us_ = false;
  bool closed_ = false;
  int64_t next_id_ = 1;
  WebSocketClient ws_;
};

Result<InspectorSession> open_inspector(int32_t pid, Deadline deadline);

}  // namespace gp::runtime::node
