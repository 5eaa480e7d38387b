#include "gp/flame/page.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gp::test::flame {
namespace {

std::string render(const gp::flame::PageOptions& options) {
  fold::FoldedStack s;
  s.frames = {{"main", model::FrameKind::native}, {"</script>", model::FrameKind::kernel}};
  s.count = 3;
  auto tree = gp::flame::build_tree({s});
  std::ostringstream out;
  gp::flame::write_page(out, tree, options);
  return out.str();
}

TEST(FlamePage, FillsEveryPlaceholder) {
  const auto html = render({});
  EXPECT_EQ(html.find("{{"), std::string::npos);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(FlamePage, EscapesTheTitleAndKeepsFrameNamesInsideTheDataScript) {
  gp::flame::PageOptions options;
  options.title = "a <b> & c";
  const auto html = render(options);
  EXPECT_NE(html.find("<title>a &lt;b&gt; &amp; c</title>"), std::string::npos);
  // Exactly the template's own </script> closers: a frame name cannot end a script early.
  size_t closers = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1))
    ++closers;
  EXPECT_EQ(closers, 3u);
}

TEST(FlamePage, NeedsNoNetwork) {
  const auto html = render({});
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(FlamePage, SameInputSameBytes) {
  gp::flame::PageOptions options;
  options.subtitle = "sub";
  options.inverted = true;
  EXPECT_EQ(render(options), render(options));
  auto other = options;
  other.colour_seed = 7;
  EXPECT_NE(render(options), render(other));
}

}  // namespace
}  // namespace gp::test::flame
