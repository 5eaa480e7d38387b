// libFuzzer target for the WebSocket frame decoder that reads Node's inspector (a process in a
// container can answer in its place, and the profiler runs as root): any bytes, fed in pieces
// of any size, give frames or an Error, never a crash or a message over the decoder's limit.
// The first byte picks the piece size; every decoded frame must encode and decode to itself.
//
//   scripts/fuzz.sh websocket_fuzz

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "runtime/node/websocket.h"

namespace {

using gp::runtime::node::FrameDecoder;
using gp::runtime::node::WsFrame;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "websocket_fuzz: invariant violated: %s\n", what);
  std::abort();
}

void check_round_trip(const WsFrame& f) {
  FrameDecoder again(1u << 20);
  again.feed(gp::runtime::node::encode_frame(f, std::nullopt));
  auto back = again.next();
  if (!back.ok() || !back->has_value()) fail("an encoded frame does not decode");
  if ((*back)->payload != f.payload || (*back)->opcode != f.opcode)
    fail("round trip changes a frame");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr size_t kMax = 1u << 16;
  FrameDecoder decoder(kMax);
  for (size_t pos = 0; pos <= bytes.size(); pos += piece) {
    decoder.feed(bytes.substr(pos, piece));
    for (;;) {
      auto frame = decoder.next();
      if (!frame.ok()) {
        if (frame.error().message.empty()) fail("error without a message");
        return 0;
      }
      if (!frame->has_value()) break;
      if ((*frame)->payload.size() > kMax) fail("a message over the limit came through");
      if ((*frame)->fin) check_round_trip(**frame);
    }
  }
  return 0;
}
