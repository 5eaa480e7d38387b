// Python frame names as gProfiler's PyPerf gives them (runtime/python/pyperf_name.h): the module
// from the file name and one class before the function.
#include <gtest/gtest.h>

#include "runtime/python/pyperf_name.h"

namespace gp::runtime::python {
namespace {

TEST(PyPerfName, ModuleOfAnInterpreterFileOrAnInstalledPackage) {
  EXPECT_EQ(pyperf_module("/usr/lib/python3.11/threading.py"), "threading");
  EXPECT_EQ(pyperf_module("/usr/lib/python3.11/json/decoder.py"), "json.decoder");
  EXPECT_EQ(pyperf_module("/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py"),
            "numpy.core.fromnumeric");
  EXPECT_EQ(pyperf_module("/opt/v/lib64/python3.12/site-packages/tinypkg/__init__.py"),
            "tinypkg.__init__");
  EXPECT_EQ(pyperf_module("/usr/lib32/python2.7/os.pyc"), "os");
  // The last such directory counts.
  EXPECT_EQ(pyperf_module("/usr/lib/python3.11/site-packages/x/lib/python3/y.py"), "y");
}

TEST(PyPerfName, ModuleOfAScriptIsItsWholePath) {
  EXPECT_EQ(pyperf_module("/app/lister.py"), "app.lister");
  EXPECT_EQ(pyperf_module("/tmp/gp-x.1a2B/work.py"), "tmp.gp-x.1a2B.work");
  EXPECT_EQ(pyperf_module("work.py"), "work");
  // Not an interpreter's directory: "/mylib/python3", "/lib/python4", "/lib/pythonic".
  EXPECT_EQ(pyperf_module("/srv/mylib/python3/a.py"), "srv.mylib.python3.a");
  EXPECT_EQ(pyperf_module("/lib/python4/a.py"), "lib.python4.a");
  EXPECT_EQ(pyperf_module("/lib/pythonic/a.py"), "lib.pythonic.a");
  EXPECT_EQ(pyperf_module("<string>"), "<string>");
}

TEST(PyPerfName, ModuleOfAZipImportStartsInTheArchive) {
  EXPECT_EQ(pyperf_module("/srv/app.zip/pkg/mod.py"), "pkg.mod");
  EXPECT_EQ(pyperf_module("/usr/lib/python311.zip/encodings/utf_8.py"), "encodings.utf_8");
}

TEST(PyPerfName, OneClassBeforeTheFunction) {
  EXPECT_EQ(pyperf_qualified("burner"), "burner");
  EXPECT_EQ(pyperf_qualified("Burner.burner"), "Burner.burner");
  EXPECT_EQ(pyperf_qualified("Outer.Inner.method"), "Inner.method");
  EXPECT_EQ(pyperf_qualified("outer.<locals>.inner"), "inner");
  EXPECT_EQ(pyperf_qualified("f.<locals>.C.m"), "C.m");
  EXPECT_EQ(pyperf_qualified("<module>"), "<module>");
  EXPECT_EQ(pyperf_qualified("main.<locals>.<listcomp>"), "<listcomp>");
}

TEST(PyPerfName, FrameNameIsModuleThenQualifiedName) {
  EXPECT_EQ(pyperf_frame_name("/app/lister.py", "Burner.burner"), "app.lister.Burner.burner");
  EXPECT_EQ(pyperf_frame_name("/usr/lib/python3.11/threading.py", "Thread._bootstrap"),
            "threading.Thread._bootstrap");
  EXPECT_EQ(pyperf_frame_name("", "spin"), "spin");
}

}  // namespace
}  // namespace gp::runtime::python
