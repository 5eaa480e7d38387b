// RFC 6455 framing and the handshake's accept key (see websocket.h).
#include <cstring>

#include "runtime/node/websocket.h"

namespace gp::runtime::node {
namespace {

bool is_control(Opcode op) { return (static_cast<uint8_t>(op) & 0x8) != 0; }

bool known_opcode(uint8_t op) { return op <= 0x2 || (op >= 0x8 && op <= 0xA); }

uint32_t rotl(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

// SHA-1 (FIPS 180-4). Only the handshake's accept key uses it: not a security boundary, a
// check that the peer speaks WebSocket.
std::array<uint8_t, 20> sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg(data);
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>(bits >> (i * 8)));
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const uint8_t*>(msg.data() + off + i * 4);
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f = 0, k = 0;
      if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
      else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
      else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      else f = b ^ c ^ d, k = 0xCA62C1D6;
      const uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rotl(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::array<uint8_t, 20> out{};
  for (int i = 0; i < 20; ++i) out[i] = static_cast<uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

}  // namespace

std::string websocket_accept(std::string_view key) {
  const auto digest = sha1(std::string(key) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
  return base64(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string encode_frame(const WsFrame& frame, const std::optional<std::array<uint8_t, 4>>& mask) {
  std::string out;
  out.push_back(static_cast<char>((frame.fin ? 0x80 : 0) | static_cast<uint8_t>(frame.opcode)));
  const uint8_t mask_bit = mask ? 0x80 : 0;
  const uint64_t n = frame.payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(mask_bit | n));
  } else if (n <= 0xFFFF) {
    out.push_back(static_cast<char>(mask_bit | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  } else {
    out.push_back(static_cast<char>(mask_bit | 127));
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(n >> (i * 8)));
  }
  if (!mask) return out + frame.payload;
  out.append(reinterpret_cast<const char*>(mask->data()), 4);
  const size_t head = out.size();
  out += frame.payload;
  for (size_t i = 0; i < n; ++i) out[head + i] = static_cast<char>(out[head + i] ^ (*mask)[i % 4]);
  return out;
}

Result<std::optional<WsFrame>> FrameDecoder::next_raw() {
  const auto* p = reinterpret_cast<const uint8_t*>(buffer_.data());
  if (buffer_.size() < 2) return std::optional<WsFrame>{};
  if ((p[0] & 0x70) != 0) return make_error("websocket frame uses reserved bits");
  if (!known_opcode(p[0] & 0x0F)) return make_error("websocket frame has an unknown opcode");
  const bool masked = (p[1] & 0x80) != 0;
  uint64_t len = p[1] & 0x7F;
  size_t pos = 2;
  if (len >= 126) {
    const size_t width = len == 126 ? 2 : 8;
    if (buffer_.size() < pos + width) return std::optional<WsFrame>{};
    len = 0;
    for (size_t i = 0; i < width; ++i) len = (len << 8) | p[pos + i];
    pos += width;
  }
  if (len > max_message_) return make_error("websocket frame is too large");
  if (buffer_.size() < pos + (masked ? 4 : 0) + len) return std::optional<WsFrame>{};
  WsFrame f;
  f.fin = (p[0] & 0x80) != 0;
  f.opcode = static_cast<Opcode>(p[0] & 0x0F);
  if (is_control(f.opcode) && (!f.fin || len > 125))
    return make_error("websocket control frame is fragmented or longer than 125 bytes");
  uint8_t key[4] = {0, 0, 0, 0};
  if (masked) std::memcpy(key, p + pos, 4), pos += 4;
  f.payload.assign(buffer_, pos, len);
  if (masked) {
    for (size_t i = 0; i < len; ++i) f.payload[i] = static_cast<char>(f.payload[i] ^ key[i % 4]);
  }
  buffer_.erase(0, pos + len);
  return std::optional<WsFrame>(std::move(f));
}

Result<std::optional<WsFrame>> FrameDecoder::next() {
  while (true) {
    auto raw = next_raw();
    if (!raw) return raw.error();
    if (!*raw) return std::optional<WsFrame>{};
    WsFrame f = std::move(**raw);
    if (is_control(f.opcode)) return std::optional<WsFrame>(std::move(f));
    if (f.opcode == Opcode::continuation) {
      if (!partial_) return make_error("websocket continuation frame without a message");
      if (partial_->payload.size() + f.payload.size() > max_message_)
        return make_error("websocket message is too large");
      partial_->payload += f.payload;
      if (!f.fin) continue;
      WsFrame done = std::move(*partial_);
      partial_.reset();
      done.fin = true;
      return std::optional<WsFrame>(std::move(done));
    }
    if (partial_) return make_error("websocket message started inside a fragmented message");
    if (f.fin) return std::optional<WsFrame>(std::move(f));
    partial_ = std::move(f);
  }
}

}  // namespace gp::runtime::node
