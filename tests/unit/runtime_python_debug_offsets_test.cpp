// CPython's _Py_DebugOffsets as gp reads them: the structs of Debian's python3.13, 3.14 and 3.15
// (tests/fixtures/runtime/python/debug_offsets_3.X.txt, dumped from the binaries with
// debug_offsets_tool.py), their layouts against gp's tables, and what gp refuses: no cookie, a
// minor version whose struct gp does not know, a free-threaded build, a struct cut short or with
// offsets outside their structs. A struct whose offsets differ from gp's table is named.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/python/debug_offsets.h"
#include "runtime/python/python_layout.h"
#include "runtime_python_dumped_offsets.h"

namespace gp::runtime::python {
namespace {

std::string dumped(const std::string& minor) { return test::dumped_debug_offsets(minor); }

void put(std::string& bytes, size_t slot, uint64_t value) {
  std::memcpy(&bytes[slot * 8], &value, 8);
}

uint64_t get(const std::string& bytes, size_t slot) {
  uint64_t v = 0;
  std::memcpy(&v, &bytes[slot * 8], 8);
  return v;
}

TEST(RuntimePythonDebugOffsets, ReadsDebiansBuildsOf313To315) {
  struct Case {
    const char* minor;
    const char* version;
    size_t size;
    uint64_t tag_mask;
  };
  for (Case c : {Case{"3.13", "3.13.5", 584, 0}, Case{"3.14", "3.14.10", 760, 3},
                 Case{"3.15", "3.15.2", 888, 3}}) {
    SCOPED_TRACE(c.minor);
    auto d = parse_debug_offsets(dumped(c.minor));
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->version.text(), c.version);
    EXPECT_EQ(d->struct_size, c.size);
    EXPECT_EQ(debug_offsets_size(d->version.minor), c.size);
    EXPECT_EQ(d->executable_tag_mask, c.tag_mask);
    EXPECT_EQ(d->tstate_current_frame, 72u);
    EXPECT_EQ(d->frame_previous, 8u);
    EXPECT_EQ(d->code_qualname, 128u);
    EXPECT_EQ(d->object_ob_type, 8u);
    EXPECT_EQ(d->unicode_ascii_size, 40u);
    EXPECT_EQ(d->unicode_compact_size, 56u);
    // The published offsets are what gp's table of the version says.
    auto table = layout_for_minor(d->version.minor);
    ASSERT_TRUE(table);
    EXPECT_EQ(layout_differences(layout_from_debug_offsets(*d), *table), "");
  }
}

TEST(RuntimePythonDebugOffsets, FieldsThatMovedBetweenVersions) {
  auto d313 = parse_debug_offsets(dumped("3.13"));
  auto d315 = parse_debug_offsets(dumped("3.15"));
  ASSERT_TRUE(d313.ok() && d315.ok());
  // 3.15 put base_frame and the last-profiled-frame fields before thread_id.
  EXPECT_EQ(d313->tstate_thread_id, 152u);
  EXPECT_EQ(d315->tstate_thread_id, 176u);
  EXPECT_EQ(d315->tstate_native_thread_id, 184u);
  EXPECT_EQ(d313->runtime_interpreters_head, 632u);
  EXPECT_EQ(d315->runtime_interpreters_head, 936u);
  PyLayout l = layout_from_debug_offsets(*d313);
  EXPECT_EQ(l.gil_last_holder, 8u);  // _gil.last_holder - _gil, both published
  EXPECT_EQ(l.gil_locked, 16u);
  EXPECT_EQ(l.iframe_owner, 70u);
}

TEST(RuntimePythonDebugOffsets, OffsetsThatDifferFromTheTableAreNamed) {
  // A build whose code.name and code.qualname offsets were swapped (3.14: slots 41 and 42).
  std::string b = dumped("3.14");
  uint64_t name = get(b, 41), qualname = get(b, 42);
  put(b, 41, qualname);
  put(b, 42, name);
  auto d = parse_debug_offsets(b);
  ASSERT_TRUE(d.ok()) << d.error().message;
  PyLayout published = layout_from_debug_offsets(*d);
  EXPECT_EQ(*published.code_qualname, name);  // walked by what is published
  EXPECT_EQ(layout_differences(published, *layout_for_minor(14)), "code.name, code.qualname");
}

TEST(RuntimePythonDebugOffsets, RefusesWhatItCannotRead) {
  std::string b = dumped("3.13");
  EXPECT_FALSE(parse_debug_offsets(b.substr(0, 16)).ok());
  EXPECT_FALSE(parse_debug_offsets(b.substr(0, 300)).ok());  // cut short
  std::string bad_cookie = b;
  bad_cookie[0] = 'y';
  EXPECT_FALSE(parse_debug_offsets(bad_cookie).ok());

  std::string v316 = b;
  put(v316, 1, 0x031000F0);
  auto r = parse_debug_offsets(v316);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "CPython 3.16.0 publishes its offsets in a _Py_DebugOffsets layout gp does not know "
            "(gp knows 3.13 - 3.15)");
  std::string v312 = b;
  put(v312, 1, 0x030C00F0);
  EXPECT_FALSE(parse_debug_offsets(v312).ok());

  std::string free_threaded = b;
  put(free_threaded, 2, 1);
  auto ft = parse_debug_offsets(free_threaded);
  ASSERT_FALSE(ft.ok());
  EXPECT_NE(ft.error().message.find("free-threaded"), std::string::npos);

  std::string huge = b;
  put(huge, 9, 1ull << 40);  // interp.threads_head
  EXPECT_FALSE(parse_debug_offsets(huge).ok());
  std::string outside = b;
  put(outside, 37, 4096);  // code.qualname beyond sizeof(PyCodeObject)
  EXPECT_FALSE(parse_debug_offsets(outside).ok());
  std::string not_objects = b;
  put(not_objects, 45, 0);  // pyobject.ob_type
  EXPECT_FALSE(parse_debug_offsets(not_objects).ok());
}

}  // namespace
}  // namespace gp::runtime::python
