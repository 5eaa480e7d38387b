// escape_for_terminal: control characters, C1 controls and bytes that are not UTF-8 become
// visible escapes; honest text (ASCII, UTF-8, backslashes) reads as before.

#include <gtest/gtest.h>

#include "gp/util/escape.h"

namespace gp::test::util {
namespace {

using gp::util::escape_for_terminal;

TEST(Escape, HonestTextIsUnchanged) {
  EXPECT_EQ(escape_for_terminal("cannot open 'run.gpa': No such file"),
            "cannot open 'run.gpa': No such file");
  EXPECT_EQ(escape_for_terminal("/srv/données/日本.so C:\\x"), "/srv/données/日本.so C:\\x");
}

TEST(Escape, ControlCharactersCannotStartALineOrReachTheTerminal) {
  EXPECT_EQ(escape_for_terminal("a\nb\rc\td\x1b[31me"), "a\\nb\\rc\\td\\e[31me");
  EXPECT_EQ(escape_for_terminal(std::string("nul\0bell\x07"
                                            "del\x7f",
                                            13)),
            "nul\\x00bell\\x07del\\x7f");
}

TEST(Escape, C1ControlsAndInvalidUtf8AreHexBytes) {
  EXPECT_EQ(escape_for_terminal("csi\xc2\x9b"
                                "2J"),
            "csi\\xc2\\x9b2J");
  EXPECT_EQ(escape_for_terminal("bad\xff\xfe"), "bad\\xff\\xfe");
  EXPECT_EQ(escape_for_terminal("cut\xe6\x97"), "cut\\xe6\\x97");
  EXPECT_EQ(escape_for_terminal("\xef\xbf\xbd"), "\xef\xbf\xbd");  // a real U+FFFD stays
}

}  // namespace
}  // namespace gp::test::util
