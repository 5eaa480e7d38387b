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
  EXPECT_FALSE(PythonVersion({3, 14, 0}).supported());
}

TEST(RuntimePythonLayout, TablesFor38To312AndNoneOtherwise) {
  for (int minor = 8; minor <= 12; ++minor) EXPECT_TRUE(layout_for_minor(minor)) << minor;
  EXPECT_FALSE(layout_for_minor(7));
  EXPECT_FALSE(layout_for_minor(13));  // read from _Py_DebugOffsets instead
  EXPECT_EQ(layout_for_minor(10)->frame_model, FrameModel::frame_object);
  EXPECT_EQ(layout_for_minor(11)->frame_model, FrameModel::cframe);
  EXPECT_TRUE(layout_for_minor(11)->code_qualname.has_value());
  EXPECT_FALSE(layout_for_minor(10)->code_qualname.has_value());
}

std::string debug_offsets_313() {
  std::string b(kDebugOffsetsSize, '\0');
  auto put = [&](size_t slot, uint64_t v) { std::memcpy(b.data() + slot * 8, &v, 8); };
  std::memcpy(b.data(), "xdebugpy", 8);
  put(1, 0x030D00F0);
  // Values of CPython 3.13.0 (x86-64), as its _PyRuntime.debug_offsets holds them.
  put(5, 632);
  put(8, 7264), put(9, 7344), put(14, 16), put(15, 7752), put(17, 7768), put(18, 7760);
  put(21, 8), put(22, 16), put(23, 72), put(24, 152), put(25, 160);
  put(29, 8), put(30, 0), put(31, 56), put(33, 70);
  put(35, 112), put(36, 120), put(37, 128), put(38, 136), put(39, 68), put(43, 200);
  put(65, 16), put(66, 32), put(68, 32), put(69, 16), put(70, 40);
  return b;
}

TEST(RuntimePythonLayout, From313DebugOffsets) {
  auto l = layout_from_debug_offsets(debug_offsets_313());
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->minor, 13);
  EXPECT_EQ(l->frame_model, FrameModel::current_frame);
  EXPECT_EQ(l->runtime_interpreters_head, 632u);
  EXPECT_EQ(l->interp_threads_head, 7344u);
  EXPECT_EQ(l->gil_last_holder, 8u);
  EXPECT_EQ(l->gil_locked, 16u);
  EXPECT_EQ(l->tstate_frame, 72u);
  EXPECT_EQ(*l->tstate_native_thread_id, 160u);
  EXPECT_EQ(l->iframe_owner, 70u);
  EXPECT_EQ(*l->code_qualname, 128u);
  EXPECT_EQ(l->code_code_adaptive, 200u);
  EXPECT_EQ(l->ascii_data, 40u);
  EXPECT_EQ(l->compact_data, 56u);
}

TEST(RuntimePythonLayout, RejectsWrongCookieVersionAndGarbage) {
  std::string b = debug_offsets_313();
  EXPECT_FALSE(layout_from_debug_offsets(b.substr(0, 100)).ok());
  std::string bad_cookie = b;
  bad_cookie[0] = 'y';
  EXPECT_FALSE(layout_from_debug_offsets(bad_cookie).ok());
  std::string v314 = b;
  uint64_t hex = 0x030E00F0;
  std::memcpy(v314.data() + 8, &hex, 8);
  auto r = layout_from_debug_offsets(v314);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("3.14"), std::string::npos);
  std::string free_threaded = b;
  free_threaded[16] = 1;
  auto ft = layout_from_debug_offsets(free_threaded);
  ASSERT_FALSE(ft.ok());
  EXPECT_NE(ft.error().message.find("free-threaded"), std::string::npos);
  std::string huge = b;
  uint64_t big = 1ull << 40;
  std::memcpy(huge.data() + 9 * 8, &big, 8);
  EXPECT_FALSE(layout_from_debug_offsets(huge).ok());
}

}  // namespace
}  // namespace gp::runtime::python
