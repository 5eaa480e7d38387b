// RFC 6455 framing of gp's inspector client: the codec on bytes, then a real peer (a Node
// inspector) for messages around the 7-bit/16-bit/64-bit length boundaries.
#include <gtest/gtest.h>

#include "runtime/node/inspector.h"
#include "runtime/node/websocket.h"
#include "runtime_node_support.h"

namespace gp::test::runtime_node {
namespace {

using runtime::node::encode_frame;
using runtime::node::FrameDecoder;
using runtime::node::Opcode;
using runtime::node::WsFrame;

const std::array<uint8_t, 4> kMask = {0x37, 0xfa, 0x21, 0x3d};

std::string decode_one(const std::string& bytes) {
  FrameDecoder d;
  d.feed(bytes);
  auto f = d.next();
  EXPECT_TRUE(f.ok());
  EXPECT_TRUE(f.ok() && f->has_value());
  return f.ok() && f->has_value() ? (*f)->payload : std::string("<none>");
}

TEST(WebSocketFrame, AcceptKeyMatchesRfc6455Example) {
  // RFC 6455 §1.3: key "dGhlIHNhbXBsZSBub25jZQ==" is answered with this accept value.
  EXPECT_EQ(runtime::node::websocket_accept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketFrame, MaskedHelloIsTheRfcExample) {
  // RFC 6455 §5.7: a masked "Hello" with mask 37 fa 21 3d.
  const std::string wire = encode_frame(WsFrame{true, Opcode::text, "Hello"}, kMask);
  const std::string expected = "\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58";
  EXPECT_EQ(wire, expected);
  EXPECT_EQ(decode_one(wire), "Hello");
}

TEST(WebSocketFrame, LengthEncodingsAtTheBoundaries) {
  struct Case {
    size_t length;
    size_t header;  // bytes before the payload, mask included
    uint8_t code;   // the 7-bit length field
  };
  for (const Case c :
       {Case{125, 6, 125}, Case{126, 8, 126}, Case{65535, 8, 126}, Case{65536, 14, 127}}) {
    std::string payload(c.length, 'a');
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
    const std::string wire = encode_frame(WsFrame{true, Opcode::text, payload}, kMask);
    ASSERT_EQ(wire.size(), c.header + c.length) << c.length;
    EXPECT_EQ(static_cast<uint8_t>(wire[1]), 0x80 | c.code) << c.length;
    // The payload on the wire is masked, not plain.
    EXPECT_NE(wire.substr(c.header, 8), payload.substr(0, 8));
    EXPECT_EQ(decode_one(wire), payload) << c.length;
  }
}

TEST(WebSocketFrame, ReassemblesFragmentsAroundAPing) {
  std::string wire = encode_frame(WsFrame{false, Opcode::text, "frag"}, std::nullopt);
  wire += encode_frame(WsFrame{true, Opcode::ping, "p"}, std::nullopt);
  wire += encode_frame(WsFrame{false, Opcode::continuation, "ment"}, std::nullopt);
  wire += encode_frame(WsFrame{true, Opcode::continuation, "ed"}, std::nullopt);
  FrameDecoder d;
  // Byte by byte: every split point of the stream must work.
  std::vector<WsFrame> got;
  for (char c : wire) {
    d.feed(std::string_view(&c, 1));
    while (true) {
      auto f = d.next();
      ASSERT_TRUE(f.ok()) << f.error().message;
      if (!f->has_value()) break;
      got.push_back(**f);
    }
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].opcode, Opcode::ping);
  EXPECT_EQ(got[0].payload, "p");
  EXPECT_EQ(got[1].opcode, Opcode::text);
  EXPECT_EQ(got[1].payload, "fragmented");
}

TEST(WebSocketFrame, RejectsProtocolViolations) {
  const auto error_of = [](const std::string& wire) {
    FrameDecoder d(1 << 20);
    d.feed(wire);
    auto f = d.next();
    return f.ok() ? std::string() : f.error().message;
  };
  EXPECT_NE(error_of(encode_frame(WsFrame{true, Opcode::continuation, "x"}, std::nullopt)), "");
  EXPECT_NE(
      error_of(encode_frame(WsFrame{true, Opcode::ping, std::string(126, 'x')}, std::nullopt)), "");
  EXPECT_NE(error_of(encode_frame(WsFrame{false, Opcode::close, ""}, std::nullopt)), "");
  EXPECT_NE(error_of(std::string("\xC1\x00", 2)), "");  // RSV1 set, no extension agreed
  EXPECT_NE(error_of(std::string("\x83\x00", 2)), "");  // opcode 3 is reserved
  std::string huge = "\x81\x7f";
  for (int i = 0; i < 8; ++i) huge.push_back(i == 4 ? '\x01' : '\0');  // 2^32 bytes announced
  EXPECT_NE(error_of(huge), "");
  EXPECT_NE(error_of(encode_frame(WsFrame{false, Opcode::text, "a"}, std::nullopt) +
                     encode_frame(WsFrame{true, Opcode::text, "b"}, std::nullopt)),
            "");
}

// Node's inspector as the peer: a message of each length class each way.
TEST(WebSocketPeer, NodeInspectorExchangesMessagesOfEveryLengthClass) {
  NodeProcess node = NodeProcess::start({"--inspect=127.0.0.1:0"});
  auto session = runtime::node::open_inspector(node.pid(), deadline_in(20));
  ASSERT_TRUE(session.ok()) << session.error().message;
  EXPECT_FALSE(session->opened_by_us());  // --inspect opened it: gp must leave it open
  for (size_t n :
       {size_t{10}, size_t{125}, size_t{126}, size_t{65535}, size_t{65536}, size_t{200000}}) {
    // Request grows with n (a long string literal), and so does the reply.
    const std::string expr =
        "'" + std::string(n, 'q') + "'.length + ':' + 'z'.repeat(" + std::to_string(n) + ")";
    auto value = session->evaluate(expr, deadline_in(20));
    ASSERT_TRUE(value.ok()) << n << ": " << value.error().message;
    EXPECT_EQ(value->text, std::to_string(n) + ":" + std::string(n, 'z'));
  }
  EXPECT_TRUE(session->close(deadline_in(5)).ok());
  auto ports = runtime::node::listening_ports(node.pid());
  ASSERT_TRUE(ports.ok());
  EXPECT_EQ(ports->size(), 1u) << "an inspector gp did not open stays open";
}

}  // namespace
}  // namespace gp::test::runtime_node
