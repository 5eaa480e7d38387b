#include "gp/flame/json.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gp::test::flame {
namespace {

using model::FrameKind;

fold::FoldedStack stack(std::initializer_list<const char*> frames, uint64_t count,
                        FrameKind kind = FrameKind::native) {
  fold::FoldedStack s;
  for (const char* f : frames) s.frames.push_back({f, kind});
  s.count = count;
  return s;
}

std::string encode(const gp::flame::FlameTree& tree) {
  std::ostringstream out;
  gp::flame::write_tree_json(out, tree);
  return out.str();
}

// The value of one top-level array, e.g. "label" -> "1,2,0".
std::string field(const std::string& json, const std::string& key) {
  const auto start = json.find("\"" + key + "\":[");
  if (start == std::string::npos) return "<missing>";
  const auto open = start + key.size() + 4;
  return json.substr(open, json.find(']', open) - open);
}

TEST(FlameJson, EncodesPreorderWithLevelsAndSelfCounts) {
  auto tree =
      gp::flame::build_tree({stack({"a", "f"}, 1), stack({"b", "f"}, 2), stack({"c", "f"}, 3)});
  const auto json = encode(tree);
  // "f" is used by three nodes, so it gets the smallest index.
  EXPECT_EQ(field(json, "names"), R"("f","root","a","b","c")");
  EXPECT_EQ(field(json, "label"), "1,2,0,3,0,4,0");
  EXPECT_EQ(field(json, "up"), "1,0,0,2,0,2,0");
  EXPECT_EQ(field(json, "self"), "0,0,1,0,2,0,3");
  EXPECT_EQ(field(json, "bself"), "<missing>");
  EXPECT_NE(json.find("\"differential\":false"), std::string::npos);
}

TEST(FlameJson, KindsIndexTheKindNames) {
  auto tree = gp::flame::build_tree(
      {stack({"k"}, 1, FrameKind::kernel), stack({"p"}, 1, FrameKind::python)});
  const auto json = encode(tree);
  EXPECT_EQ(field(json, "names"), R"("root","k","p")");
  EXPECT_EQ(field(json, "kinds"), "12,2,4");  // pseudo, kernel, python
  EXPECT_NE(field(json, "kindNames").find(R"("unknown","native","kernel","java","python")"),
            std::string::npos);
}

TEST(FlameJson, DifferentialTreesCarryBaseSelfCounts) {
  auto tree = gp::flame::build_tree({stack({"m", "a"}, 3), stack({"m", "b"}, 1)});
  gp::flame::add_base(tree, {stack({"m", "a"}, 1), stack({"m", "b"}, 4), stack({"m", "gone"}, 2)});
  const auto json = encode(tree);
  EXPECT_NE(json.find("\"differential\":true"), std::string::npos);
  EXPECT_EQ(field(json, "self"), "0,0,3,1");
  EXPECT_EQ(field(json, "bself"), "0,2,1,4");  // "gone" stays in m's base self
}

TEST(FlameJson, StringsAreSafeInsideAScriptElement) {
  EXPECT_EQ(gp::flame::json_string("</script><b>&\"\\\n"),
            R"("\u003c/script\u003e\u003cb\u003e\u0026\"\\\u000a")");
  EXPECT_EQ(gp::flame::json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  // JSON text is UTF-8: a byte that is not part of it is U+FFFD, as the browser shows it.
  EXPECT_EQ(gp::flame::json_string("x\xff\x7f"), "\"x\xef\xbf\xbd\x7f\"");
}

}  // namespace
}  // namespace gp::test::flame
