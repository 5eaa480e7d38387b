// The one UTF-8 validator (util/utf8.h): the Unicode table of well-formed sequences, and the
// decoder, the repair and the JSON/terminal/pprof encoders built on it agreeing with it.
#include <gtest/gtest.h>

#include <string>

#include "gp/util/escape.h"
#include "gp/util/json.h"
#include "util/utf8.h"

namespace gp::util {
namespace {

TEST(Utf8, WellFormedSequencesOnly) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5 \xF4\x8F\xBF\xBF"));
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong 3-byte
  EXPECT_FALSE(is_valid_utf8("\xF0\x80\x80\xAF"));  // overlong 4-byte
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));  // truncated
  EXPECT_FALSE(is_valid_utf8("\x80"));      // a lone continuation byte
}

TEST(Utf8, EachInvalidByteBecomesOneReplacementCharacter) {
  EXPECT_EQ(to_valid_utf8("a\xE2\x82z"), "a\xEF\xBF\xBD\xEF\xBF\xBDz");
  EXPECT_EQ(to_valid_utf8("\xC3\xA9"), "\xC3\xA9");
  size_t pos = 0;
  std::string s = "\xC3\xA9\xF0\x9F\x94\xA5\xED\xA0\x80";
  EXPECT_EQ(next_code_point(s, pos), 0xE9u);
  EXPECT_EQ(next_code_point(s, pos), 0x1F525u);
  EXPECT_EQ(next_code_point(s, pos), 0xFFFDu);  // the surrogate's first byte alone
  EXPECT_EQ(pos, 7u);
}

TEST(Utf8, TheEncodersAgreeOnWhatIsValid) {
  const std::string surrogate = "x\xED\xA0\x80y";
  std::string json;
  json::append_quoted(surrogate, json, false);
  EXPECT_EQ(json, "\"x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDy\"");
  EXPECT_EQ(escape_for_terminal(surrogate), "x\\xed\\xa0\\x80y");
  EXPECT_EQ(escape_for_terminal("\xF0\x9F\x94\xA5"), "\xF0\x9F\x94\xA5");
}

}  // namespace
}  // namespace gp::util
