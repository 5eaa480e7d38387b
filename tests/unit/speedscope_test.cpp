// speedscope export: exact output for a small input, JSON escaping, and validation against
// speedscope's own schema (tests/speedscope/validate.sh: ajv + the npm package's schema).

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

#include "gp/fold/speedscope.h"
#include "gp/util/version.h"

namespace gp::test::speedscope {
namespace {

using fold::FoldedStack;
using model::FrameKind;

std::vector<FoldedStack> sample_stacks() {
  return {
      {{{"main", FrameKind::native}, {"sys_read", FrameKind::kernel}}, 3},
      {{{"main", FrameKind::native}}, 2},
      {{{"main", FrameKind::native}, {"sys_read", FrameKind::native}}, 1},
  };
}

std::string render(const std::vector<FoldedStack>& stacks, const std::string& name) {
  std::ostringstream out;
  auto st = fold::write_speedscope(stacks, name, out);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return out.str();
}

TEST(Speedscope, WritesOneSampledProfileWithSharedFrames) {
  std::string want = std::string(
                         "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
                         "\"exporter\":\"gp@") +
                     kVersion +
                     "\",\n"
                     "\"name\":\"run.gpa\",\n"
                     "\"activeProfileIndex\":0,\n"
                     "\"shared\":{\"frames\":[\n"
                     "{\"name\":\"main\"},\n"
                     "{\"name\":\"sys_read_[k]\"},\n"
                     "{\"name\":\"sys_read\"}]},\n"
                     "\"profiles\":[{\"type\":\"sampled\",\"name\":\"run.gpa\",\"unit\":\"none\","
                     "\"startValue\":0,\"endValue\":6,\n"
                     "\"samples\":[\n"
                     "[0,1],\n"
                     "[0],\n"
                     "[0,2]],\n"
                     "\"weights\":[3,2,1]}]}\n";
  EXPECT_EQ(render(sample_stacks(), "run.gpa"), want);
}

TEST(Speedscope, EmptyInputIsAnEmptyProfile) {
  std::string out = render({}, "empty");
  EXPECT_NE(out.find("\"frames\":[]"), std::string::npos) << out;
  EXPECT_NE(out.find("\"samples\":[],\n\"weights\":[]"), std::string::npos) << out;
  EXPECT_NE(out.find("\"endValue\":0"), std::string::npos) << out;
}

TEST(JsonString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(fold::json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(fold::json_string("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
  EXPECT_EQ(fold::json_string(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(fold::json_string(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(JsonString, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(fold::json_string("é€😀"), "\"é€😀\"");
  EXPECT_EQ(fold::json_string("x\xff"), "\"x\xEF\xBF\xBD\"");
  // Truncated sequence, overlong '/', a UTF-16 surrogate: one U+FFFD per byte.
  EXPECT_EQ(fold::json_string("\xe2\x82"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(fold::json_string("\xc0\xaf"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(fold::json_string("\xed\xa0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(SpeedscopeSchema, OutputValidatesWithSameStacksAndTotal) {
  std::vector<FoldedStack> stacks = sample_stacks();
  stacks.push_back({{{"we\"ird\n\x01name\xff", FrameKind::python}}, 4});
  std::string path = testing::TempDir() + "gp_speedscope.json";
  {
    std::ofstream f(path);
    ASSERT_TRUE(fold::write_speedscope(stacks, "schema test", f).ok());
  }
  CommandResult r =
      run_command(std::string("GP_SPEEDSCOPE_TOOLS_DIR='") + GP_SPEEDSCOPE_TOOLS_DIR + "' '" +
                  GP_TEST_DATA_DIR + "/speedscope/validate.sh' '" + path + "'");
  if (r.status == 77) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("profiles 1 frames 4 samples 4 total 10\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("stack main;sys_read_[k] 3\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stack main 2\n"), std::string::npos) << r.output;
  // The escaped name decodes back to the original (invalid byte replaced).
  EXPECT_NE(r.output.find("stack we\"ird\n\x01name\xEF\xBF\xBD_[p] 4\n"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace gp::test::speedscope
