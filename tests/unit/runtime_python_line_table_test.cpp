// Line-table decoding and version detection of gp's CPython sampler. The line tables are real:
// tests/fixtures/runtime/python/line_tables_3.X.txt hold the tables CPython 3.8 - 3.13
// compiled for a sample module, with the line CPython itself gives each instruction
// (make_line_tables.py); the decoder must agree on every instruction.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/python/line_table.h"
#include "runtime/python/python_layout.h"
#include "runtime/python/python_version.h"

namespace gp::runtime::python {
namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  if (hex == "-") return out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

struct Checked {
  size_t code_objects = 0;
  size_t instructions = 0;
  size_t without_line = 0;
};

Checked check_fixture(int minor) {
  Checked c;
  std::string path = std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/python/line_tables_3." +
                     std::to_string(minor) + ".txt";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line, name, table;
  uint32_t first_line = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "code") {
      std::string hex;
      ls >> name >> first_line >> hex;
      table = unhex(hex);
      ++c.code_objects;
    } else if (tag == "at") {
      uint32_t offset = 0, want = 0;
      ls >> offset >> want;
      EXPECT_EQ(line_for_offset(line_table_format(minor), table, first_line, offset), want)
          << "3." << minor << " " << name << " at byte " << offset;
      ++c.instructions;
      c.without_line += want == 0;
    }
  }
  return c;
}

TEST(RuntimePythonLineTable, MatchesCPythonOnEveryInstruction) {
  for (int minor = 8; minor <= 13; ++minor) {
    SCOPED_TRACE("3." + std::to_string(minor));
    Checked c = check_fixture(minor);
    EXPECT_EQ(c.code_objects, 6u);  // the module and its five functions
    EXPECT_GT(c.instructions, 300u);
  }
}

TEST(RuntimePythonLineTable, FormatsPerVersion) {
  EXPECT_EQ(line_table_format(8), LineTableFormat::lnotab);
  EXPECT_EQ(line_table_format(9), LineTableFormat::lnotab);
  EXPECT_EQ(line_table_format(10), LineTableFormat::linetable310);
  EXPECT_EQ(line_table_format(11), LineTableFormat::locations311);
  EXPECT_EQ(line_table_format(13), LineTableFormat::locations311);
}

TEST(RuntimePythonLineTable, GarbageAndEmptyTablesStayBounded) {
  EXPECT_EQ(line_for_offset(LineTableFormat::locations311, "", 7, 100), 7u);
  EXPECT_EQ(line_for_offset(LineTableFormat::linetable310, "", 7, 100), 7u);
  EXPECT_EQ(line_for_offset(LineTableFormat::lnotab, "", 7, 100), 7u);
  // A table without the entry-start bit is torn: first line.
  EXPECT_EQ(line_for_offset(LineTableFormat::locations311, std::string("\x01\x02\x03", 3), 7, 2),
            7u);
  // A long-form entry whose varints run off the end reads no further (its line delta, -31,
  // makes the line non-positive: no line).
  std::string cut("\xf0\x7f", 2);
  EXPECT_EQ(line_for_offset(LineTableFormat::locations311, cut, 7, 0), 0u);
}

TEST(RuntimePythonVersion, FromFileNames) {
  auto v = version_from_file_name("/usr/bin/python3.11");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text(), "3.11");
  v = version_from_file_name("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->minor, 12);
  v = version_from_file_name("/opt/libpython3.9d.so");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->minor, 9);
  EXPECT_TRUE(version_from_file_name("/usr/local/bin/python3.13t"));
  EXPECT_FALSE(version_from_file_name("/usr/bin/python3"));
  EXPECT_FALSE(version_from_file_name("/usr/bin/python3.11-config"));
  EXPECT_FALSE(version_from_file_name("/usr/lib/python3.11/lib-dynload/_ssl.so"));
  EXPECT_FALSE(version_from_file_name("/usr/bin/pythonista"));
  EXPECT_TRUE(is_interpreter_file_name("/venv/bin/python3"));
  EXPECT_FALSE(is_interpreter_file_name("/usr/lib/python3/dist-packages/x.so"));
}

TEST(RuntimePythonVersion, FromPyVersionHex) {
  auto v = version_from_hex(0x030B02F0);  // 3.11.2 final
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text(), "3.11.2");
  EXPECT_TRUE(v->supported());
  v = version_from_hex(0x030D00C1);  // 3.13.0rc1
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text(), "3.13.0");
  EXPECT_FALSE(version_from_hex(0x020712F0));  // 2.7
  EXPECT_FALSE(version_from_hex(0));
  EXPECT_FALSE(PythonVersion({3, 7, 0}).supported());
  EXPECT_TRUE(PythonVersion({3, 15, 2}).supported());
  EXPECT_FALSE(PythonVersion({3, 16, 0}).supported());
}

TEST(RuntimePythonLayout, TablesFor38To315AndNoneOtherwise) {
  for (int minor = 8; minor <= 15; ++minor) EXPECT_TRUE(layout_for_minor(minor)) << minor;
  EXPECT_FALSE(layout_for_minor(7));
  EXPECT_FALSE(layout_for_minor(16));
  EXPECT_EQ(layout_for_minor(10)->frame_model, FrameModel::frame_object);
  EXPECT_EQ(layout_for_minor(11)->frame_model, FrameModel::cframe);
  EXPECT_TRUE(layout_for_minor(11)->code_qualname.has_value());
  EXPECT_FALSE(layout_for_minor(10)->code_qualname.has_value());
}

}  // namespace
}  // namespace gp::runtime::python
