// The WebSocket/HTTP client side of websocket.h: sockets with deadlines, the opening
// handshake, and a plain HTTP GET for the inspector's /json/list.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "runtime/node/websocket.h"

namespace gp::runtime::node {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int remaining_ms(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

Status wait_fd(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return ok_status();
    if (r == 0) return make_error(std::string(kTimedOut));
    if (errno != EINTR) return make_error(errno_text("poll"));
  }
}

Status send_all(int fd, std::string_view bytes, Deadline deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return make_error(errno_text("send"));
    if (auto ok = wait_fd(fd, POLLOUT, deadline); !ok) return ok;
  }
  return ok_status();
}

// Appends what is readable now (after waiting for it); 0 bytes means the peer closed.
Result<size_t> receive_some(int fd, std::string& into, Deadline deadline) {
  char buf[65536];
  while (true) {
    if (auto ok = wait_fd(fd, POLLIN, deadline); !ok) return ok.error();
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n >= 0) {
      into.append(buf, static_cast<size_t>(n));
      return static_cast<size_t>(n);
    }
    if (errno != EINTR && errno != EAGAIN) return make_error(errno_text("recv"));
  }
}

bool same_netns(int32_t pid) {
  struct stat ours {
  }, theirs{};
  if (::stat("/proc/self/ns/net", &ours) != 0) return true;
  if (::stat(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), &theirs) != 0) return true;
  return ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev;
}

// A socket created inside pid's network namespace. setns(CLONE_NEWNET) changes only the
// calling thread, so a short-lived thread enters it; the socket keeps that namespace.
Result<proc::UniqueFd> socket_in_netns(int32_t pid) {
  const auto make = [] { return ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); };
  if (pid == 0 || same_netns(pid)) {
    proc::UniqueFd fd(make());
    if (!fd.valid()) return make_error(errno_text("socket"));
    return fd;
  }
  proc::UniqueFd ns(
      ::open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) return make_error(errno_text("cannot open the process's network namespace"));
  int fd = -1, err = 0;
  std::thread([&] {
    if (::setns(ns.get(), CLONE_NEWNET) != 0) {
      err = errno;
      return;
    }
    fd = make();
    if (fd < 0) err = errno;
  }).join();
  if (fd < 0)
    return make_error(std::string("cannot enter the process's network namespace: ") +
                      std::strerror(err));
  return proc::UniqueFd(fd);
}

std::string header_value(std::string_view head, std::string_view name) {
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string_view::npos) {
    pos += 2;
    const size_t end = head.find("\r\n", pos);
    std::string_view line = head.substr(pos, end == std::string_view::npos ? end : end - pos);
    const size_t colon = line.find(':');
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
      return std::string(v);
    }
  }
  return {};
}

// Reads until the end of the response head; `rest` receives the bytes after it.
Result<std::string> read_head(int fd, Deadline deadline, std::string& rest) {
  std::string data;
  while (true) {
    const size_t end = data.find("\r\n\r\n");
    if (end != std::string::npos) {
      rest = data.substr(end + 4);
      return data.substr(0, end + 2);
    }
    if (data.size() > 64 * 1024) return make_error("HTTP response head is too long");
    auto n = receive_some(fd, data, deadline);
    if (!n) return n.error();
    if (*n == 0) return make_error("connection closed before the HTTP response");
  }
}

std::string request(std::string_view path, uint16_t port, std::string_view extra) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\n" + std::string(extra) + "\r\n";
}

std::array<uint8_t, 4> random_mask() {
  std::array<uint8_t, 4> m{};
  if (::getrandom(m.data(), m.size(), 0) != 4) m = {0x5a, 0x17, 0xc3, 0x81};
  return m;
}

}  // namespace

Result<proc::UniqueFd> connect_loopback(int32_t pid, uint16_t port, Deadline deadline) {
  auto fd = socket_in_netns(pid);
  if (!fd) return fd.error();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd->get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) return make_error(errno_text("connect"));
    if (auto ok = wait_fd(fd->get(), POLLOUT, deadline); !ok) return ok.error();
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd->get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return make_error(std::string("connect: ") + std::strerror(err));
  }
  return std::move(*fd);
}

Result<std::string> http_get(int32_t pid, uint16_t port, std::string_view path, Deadline deadline) {
  auto fd = connect_loopback(pid, port, deadline);
  if (!fd) return fd.error();
  if (auto ok = send_all(fd->get(), request(path, port, "Connection: close\r\n"), deadline); !ok)
    return ok.error();
  std::string body;
  auto head = read_head(fd->get(), deadline, body);
  if (!head) return head.error();
  if (head->rfind("HTTP/1.1 200", 0) != 0 && head->rfind("HTTP/1.0 200", 0) != 0)
    return make_error("HTTP status: " + head->substr(0, head->find('\r')));
  const std::string length = header_value(*head, "Content-Length");
  const size_t want = length.empty() ? SIZE_MAX : std::strtoull(length.c_str(), nullptr, 10);
  while (body.size() < want) {
    auto n = receive_some(fd->get(), body, deadline);
    if (!n) return n.error();
    if (*n == 0) break;
  }
  return body;
}

WebSocketClient::WebSocketClient(proc::UniqueFd fd, std::string leftover) : fd_(std::move(fd)) {
  decoder_.feed(leftover);
}

Result<WebSocketClient> WebSocketClient::connect(int32_t pid, uint16_t port, std::string_view path,
                                                 Deadline deadline) {
  auto fd = connect_loopback(pid, port, deadline);
  if (!fd) return fd.error();
  std::array<uint8_t, 16> nonce{};
  if (::getrandom(nonce.data(), nonce.size(), 0) != 16) return make_error(errno_text("getrandom"));
  const std::string key = base64(std::string_view(reinterpret_cast<char*>(nonce.data()), 16));
  const std::string extra =
      "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
      "\r\nSec-WebSocket-Version: 13\r\n";
  if (auto ok = send_all(fd->get(), request(path, port, extra), deadline); !ok) return ok.error();
  std::string rest;
  auto head = read_head(fd->get(), deadline, rest);
  if (!head) return head.error();
  if (head->rfind("HTTP/1.1 101", 0) != 0)
    return make_error("websocket upgrade refused: " + head->substr(0, head->find('\r')));
  if (header_value(*head, "Sec-WebSocket-Accept") != websocket_accept(key))
    return make_error("websocket upgrade: wrong Sec-WebSocket-Accept");
  return WebSocketClient(std::move(*fd), std::move(rest));
}

Status WebSocketClient::send_frame(const WsFrame& frame, Deadline deadline) {
  if (!fd_.valid()) return make_error("websocket is closed");
  return send_all(fd_.get(), encode_frame(frame, random_mask()), deadline);
}

Status WebSocketClient::send_text(std::string_view text, Deadline deadline) {
  return send_frame(WsFrame{true, Opcode::text, std::string(text)}, deadline);
}

Result<std::string> WebSocketClient::receive_text(Deadline deadline) {
  while (fd_.valid()) {
    auto frame = decoder_.next();
    if (!frame) return frame.error();
    if (!*frame) {
      std::string bytes;
      auto n = receive_some(fd_.get(), bytes, deadline);
      if (!n) return n.error();
      if (*n == 0) return make_error("the peer closed the connection");
      decoder_.feed(bytes);
      continue;
    }
    WsFrame& f = **frame;
    if (f.opcode == Opcode::text || f.opcode == Opcode::binary) return std::move(f.payload);
    if (f.opcode == Opcode::ping) {
      if (auto ok = send_frame(WsFrame{true, Opcode::pong, f.payload}, deadline); !ok)
        return ok.error();
    } else if (f.opcode == Opcode::close) {
      close();
      return make_error("the peer closed the websocket");
    }
  }
  return make_error("websocket is closed");
}

void WebSocketClient::close() {
  if (!fd_.valid()) return;
  const auto soon = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  (void)send_all(fd_.get(), encode_frame(WsFrame{true, Opcode::close, {}}, random_mask()), soon);
  fd_.reset();
}

}  // namespace gp::runtime::node
