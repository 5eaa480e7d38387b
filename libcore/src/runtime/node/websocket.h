#pragma once
// A minimal RFC 6455 WebSocket client, enough to talk to Node's inspector (private to
// libcore/src/runtime/node): the handshake, masked client frames, text messages that may
// arrive in fragments (continuation frames), ping/pong and close. No extensions, no TLS.
//
// The frame codec is pure (bytes in, bytes out) so it is tested without a peer; the client
// owns a connected TCP socket and works with deadlines (every call returns an error once the
// deadline passes instead of blocking).

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gp/proc/unique_fd.h"
#include "gp/util/base64.h"
#include "gp/util/result.h"

namespace gp::runtime::node {

using Deadline = std::chrono::steady_clock::time_point;

// The error message of a call whose deadline passed.
inline constexpr std::string_view kTimedOut = "timed out";

enum class Opcode : uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

struct WsFrame {
  bool fin = true;
  Opcode opcode = Opcode::text;
  std::string payload;
};

// One frame on the wire. Clients mask every frame (RFC 6455 §5.3) with `mask`; a server frame
// passes no mask.
std::string encode_frame(const WsFrame& frame, const std::optional<std::array<uint8_t, 4>>& mask);

// Splits a byte stream into frames and reassembles fragmented messages. Control frames may
// come between the fragments of a message (§5.4) and are returned as they come.
class FrameDecoder {
 public:
  explicit FrameDecoder(size_t max_message = 256u << 20) : max_message_(max_message) {}
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete frame (continuations already merged into a final text/binary frame),
  // nullopt when more bytes are needed, or an error for a protocol violation.
  Result<std::optional<WsFrame>> next();

 private:
  Result<std::optional<WsFrame>> next_raw();
  std::string buffer_;
  std::optional<WsFrame> partial_;  // a fragmented message being assembled
  size_t max_message_;
};

// Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + RFC 6455 GUID)).
std::string websocket_accept(std::string_view key);
using util::base64;

// A TCP connection to 127.0.0.1:port made inside the network namespace of `pid` (0: ours).
// Node's inspector listens on the loopback of the target's namespace, which a containerised
// target does not share with us.
Result<proc::UniqueFd> connect_loopback(int32_t pid, uint16_t port, Deadline deadline);

// GET `path` over a fresh connection; the body when the status is 200.
Result<std::string> http_get(int32_t pid, uint16_t port, std::string_view path, Deadline deadline);

class WebSocketClient {
 public:
  WebSocketClient() = default;  // not connected: every call fails
  // Connects and performs the opening handshake for `path` ("/<uuid>").
  static Result<WebSocketClient> connect(int32_t pid, uint16_t port, std::string_view path,
                                         Deadline deadline);
  Status send_text(std::string_view text, Deadline deadline);
  // The next text message; answers pings on the way. An error once the peer closes.
  Result<std::string> receive_text(Deadline deadline);
  // Sends a close frame (best effort) and closes the socket.
  void close();

 private:
  WebSocketClient(proc::UniqueFd fd, std::string leftover);
  Status send_frame(const WsFrame& frame, Deadline deadline);
  proc::UniqueFd fd_;
  FrameDecoder decoder_;
};

}  // namespace gp::runtime::node
