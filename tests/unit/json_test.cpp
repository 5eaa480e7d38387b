// util/json: Python json.dumps compatibility, parsing, limits and round trips.

#include <gtest/gtest.h>

#include "gp/util/json.h"

namespace gp::test::util {
namespace {

using json::Value;

TEST(JsonEdit, RemovesKeysNamingATokenAtEveryDepth) {
  auto v = json::parse(
      R"({"server_token": "s3cret", "run": {"Token": "x", "keep": [{"api_TOKEN": 1, "n": 2}]}, "a": 1})");
  ASSERT_TRUE(v.ok());
  json::remove_keys_containing(*v, "token");
  EXPECT_EQ(json::dump(*v), R"({"run": {"keep": [{"n": 2}]}, "a": 1})");
}

TEST(JsonWriter, UsesPythonDefaultSeparators) {
  Value v = Value::object();
  v.set("a", Value::from_int(1));
  Value arr = Value::array();
  arr.push_back(Value::null());
  arr.push_back(Value::from_bool(true));
  arr.push_back(Value::from_string("x"));
  v.set("b", arr);
  v.set("c", Value::object());
  EXPECT_EQ(json::dump(v), R"({"a": 1, "b": [null, true, "x"], "c": {}})");
}

TEST(JsonWriter, EscapesLikeEnsureAscii) {
  // json.dumps("é\t\"\\/\x01\x7f😀") == '"\\u00e9\\t\\"\\\\/\\u0001\\u007f\\ud83d\\ude00"'
  Value v = Value::from_string("\xc3\xa9\t\"\\/\x01\x7f\xf0\x9f\x98\x80");
  EXPECT_EQ(json::dump(v), R"("\u00e9\t\"\\/\u0001\u007f\ud83d\ude00")");
}

TEST(JsonWriter, KeepsUtf8WithoutEnsureAscii) {
  Value v = Value::from_string("\xc3\xa9\n");
  EXPECT_EQ(json::dump_utf8(v), "\"\xc3\xa9\\n\"");
}

TEST(JsonWriter, ReplacesInvalidUtf8) {
  EXPECT_EQ(json::dump(Value::from_string("a\xff"
                                          "b")),
            R"("a\ufffdb")");
}

TEST(JsonWriter, FormatsFloatsAsPythonRepr) {
  EXPECT_EQ(Value::from_double(8.8).text, "8.8");
  EXPECT_EQ(Value::from_double(1218241.6).text, "1218241.6");
  EXPECT_EQ(Value::from_double(3.0).text, "3.0");
  EXPECT_EQ(Value::from_double(1e16).text, "1e+16");
  EXPECT_EQ(Value::from_double(1e15).text, "1000000000000000.0");
  EXPECT_EQ(Value::from_double(0.0001).text, "0.0001");
  EXPECT_EQ(Value::from_double(0.00001).text, "1e-05");
  EXPECT_EQ(Value::from_double(-2.5e-7).text, "-2.5e-07");
  EXPECT_EQ(Value::from_double(0.1 + 0.2).text, "0.30000000000000004");
}

TEST(JsonParser, RoundTripsADocumentByteForByte) {
  std::string text =
      R"({"containers": ["web"], "metrics": {"cpu_avg": 8.80, "mem_avg": null}, )"
      R"("application_metadata": [null, {"exe": "/usr/bin/python3", "n": -1.5e3}], "ok": false})";
  auto v = json::parse(text);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(json::dump(*v), text);
  EXPECT_EQ(v->find("metrics")->find("cpu_avg")->as_double(), 8.8);
  EXPECT_EQ(v->find("containers")->items[0].text, "web");
}

TEST(JsonParser, DecodesEscapesAndSurrogatePairs) {
  auto v = json::parse(R"("a\u00e9\ud83d\ude00\n\/")");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text, "a\xc3\xa9\xf0\x9f\x98\x80\n/");
}

TEST(JsonParser, RejectsMalformedInputWithOffset) {
  for (const char* bad :
       {"", "{", "[1,]", R"({"a" 1})", "01", "1.", "\"abc", "tru", "{} x", "\"\x01\"", R"("\x")"}) {
    auto v = json::parse(bad);
    EXPECT_FALSE(v) << bad;
    if (!v) {
      EXPECT_NE(v.error().message.find("invalid JSON at byte"), std::string::npos);
    }
  }
}

TEST(JsonParser, LimitsNesting) {
  std::string deep(10000, '[');
  auto v = json::parse(deep);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("nesting deeper"), std::string::npos);
}

TEST(JsonParser, KeepsTheLastDuplicateKeyLikePython) {
  auto v = json::parse(R"({"a": 1, "b": 2, "a": 3})");
  ASSERT_TRUE(v);
  EXPECT_EQ(json::dump(*v), R"({"a": 3, "b": 2})");
}

TEST(JsonParser, AcceptsPythonNonFiniteLiterals) {
  auto v = json::parse("[NaN, Infinity, -Infinity]");
  ASSERT_TRUE(v);
  EXPECT_EQ(json::dump(*v), "[NaN, Infinity, -Infinity]");
}

TEST(JsonValue, ComparesLikePythonDicts) {
  auto a = json::parse(R"({"x": 1, "y": [true, "s"]})");
  auto b = json::parse(R"({"y": [1, "s"], "x": 1.0})");
  auto c = json::parse(R"({"y": [1, "s"], "x": 2})");
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(*a == *b);
  EXPECT_FALSE(*a == *c);
}

TEST(JsonValue, ReadsIntegers) {
  EXPECT_EQ(json::parse("42")->as_int(), 42);
  EXPECT_EQ(json::parse("4.0")->as_int(), 4);
  EXPECT_EQ(json::parse("4.5")->as_int(-1), -1);
  EXPECT_EQ(json::parse("\"4\"")->as_int(-1), -1);
}

}  // namespace
}  // namespace gp::test::util

namespace gp::test::util {
namespace {

// Any byte sequence gives a value or an error, never a crash (run under ASan in CI builds).
TEST(JsonParser, SurvivesRandomAndMutatedInput) {
  std::string seed = R"({"a": [1, 2.5e3, "x\u00e9", {"b": null}], "c": true})";
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1103515245u + 12345u; };
  for (int i = 0; i < 5000; ++i) {
    std::string s = seed;
    int edits = 1 + next() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t at = next() % (s.size() + 1);
      switch (next() % 3) {
        case 0:
          s.insert(at, 1, static_cast<char>(next() >> 8));
          break;
        case 1:
          if (at < s.size()) s.erase(at, 1);
          break;
        default:
          s = s.substr(0, at);
          break;
      }
    }
    auto v = json::parse(s);
    if (v) json::dump(*v);
  }
}

// Found by json_fuzz: keys that differed only in bytes that are not UTF-8 were two keys, but
// printed as the same \ufffd text, so a parse of the dump gave another object.
TEST(JsonParser, InvalidUtf8BecomesReplacementCharactersSoADumpParsesToTheSameValue) {
  auto v = json::parse(
      "{\"k\xff\": 1, \"k\xfe\": 2, \"s\": \"a\xe0\x97"
      "b\"}");
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->members.size(), 2u);
  EXPECT_EQ(v->members[0].first, "k\xef\xbf\xbd");
  EXPECT_EQ(v->members[0].second.as_int(), 2);
  EXPECT_EQ(v->get_string("s"),
            "a\xef\xbf\xbd\xef\xbf\xbd"
            "b");
  auto again = json::parse(json::dump(*v));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(json::dump(*again), json::dump(*v));
}

// Many keys, and duplicates among them: the last value wins, in the first one's place.
TEST(JsonParser, DuplicateKeysAmongManyKeepTheLastValueInTheFirstPlace) {
  std::string text = "{";
  for (int i = 0; i < 50000; ++i)
    text += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  text += "\"k7\": \"last\"}";
  auto v = json::parse(text);
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->members.size(), 50000u);
  EXPECT_EQ(v->members[7].first, "k7");
  EXPECT_EQ(v->get_string("k7"), "last");
  EXPECT_EQ(v->members[49999].first, "k49999");
}

}  // namespace
}  // namespace gp::test::util
