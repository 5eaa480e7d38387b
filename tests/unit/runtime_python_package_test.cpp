// gProfiler's "[pkg==ver]" for Python frames (runtime/python/package_versions.h): which files
// are in a packages directory or the standard library, the index of a real directory laid out
// as pip (dist-info RECORD) and setuptools (egg-info installed-files.txt) leave it, the version
// string in an interpreter binary, and the frames of a live process's profile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "runtime/python/package_versions.h"

namespace gp::runtime::python {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gp-pkgtest.XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(PythonPackages, PackagesDirIsTheLastSiteOrDistPackages) {
  EXPECT_EQ(packages_dir("/v/lib/python3.11/site-packages/requests/api.py"),
            "/v/lib/python3.11/site-packages/");
  EXPECT_EQ(packages_dir("/usr/lib/python3/dist-packages/apt/package.py"),
            "/usr/lib/python3/dist-packages/");
  EXPECT_EQ(packages_dir("/a/site-packages/b/site-packages/c.py"),
            "/a/site-packages/b/site-packages/");
  EXPECT_EQ(packages_dir("/srv/app.py"), std::nullopt);
  EXPECT_EQ(packages_dir("site-packages/x.py"), std::nullopt);  // relative: never
}

TEST(PythonPackages, StandardLibraryIsUnderPythonXYButNotInPackages) {
  EXPECT_TRUE(is_standard_library("/usr/lib/python3.11/threading.py"));
  EXPECT_TRUE(is_standard_library("/usr/local/lib/python3.9/json/decoder.py"));
  EXPECT_FALSE(is_standard_library("/v/lib/python3.11/site-packages/requests/api.py"));
  EXPECT_FALSE(is_standard_library("/usr/lib/python3/dist-packages/apt/package.py"));
  EXPECT_FALSE(is_standard_library("/srv/app.py"));
  EXPECT_FALSE(is_standard_library("/opt/python3.11x/a.py"));
}

TEST(PythonPackages, IndexesDistInfoRecordAndEggInfoInstalledFiles) {
  TempDir t;
  const std::string dir = "/site-packages/";  // in the "process's" view, under root t.path
  fs::path site = t.path / "site-packages";
  // pip: METADATA names it (not the directory's spelling), RECORD lists files (CSV, a path
  // with a comma is quoted).
  write(site / "Foo_Bar-2.0.1.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: Foo-Bar\nVersion: 2.0.1\n\nName: not a header\n");
  write(site / "Foo_Bar-2.0.1.dist-info/RECORD",
        "foo_bar/__init__.py,sha256=x,10\n\"foo_bar/a,b.py\",sha256=y,3\n./foo_bar//c.py,,\n"
        "../../../bin/foo,,\nFoo_Bar-2.0.1.dist-info/RECORD,,\n");
  // setuptools: PKG-INFO and installed-files.txt relative to the .egg-info directory.
  write(site / "legacy-0.9-py3.11.egg-info/PKG-INFO",
        "Metadata-Version: 1.1\nName: legacy\nVersion: 0.9\n");
  write(site / "legacy-0.9-py3.11.egg-info/installed-files.txt",
        "../legacy/__init__.py\n../legacy/core.py\nPKG-INFO\n");
  // No metadata: gProfiler names no package.
  write(site / "nameless-1.0.dist-info/RECORD", "nameless.py,,\n");
  auto index = read_packages_dir(t.path.string(), dir);
  EXPECT_EQ(index["/site-packages/foo_bar/__init__.py"], "Foo-Bar==2.0.1");
  EXPECT_EQ(index["/site-packages/foo_bar/a,b.py"], "Foo-Bar==2.0.1");
  EXPECT_EQ(index["/site-packages/foo_bar/c.py"], "Foo-Bar==2.0.1");
  EXPECT_EQ(index["/site-packages/legacy/core.py"], "legacy==0.9");
  EXPECT_EQ(index["/site-packages/legacy-0.9-py3.11.egg-info/PKG-INFO"], "legacy==0.9");
  EXPECT_EQ(index.count("/site-packages/nameless.py"), 0u);
}

TEST(PythonPackages, VersionInBinaryIsTheOnePyVersionString) {
  using namespace std::string_literals;
  EXPECT_EQ(python_version_in_binary("\x7f"
                                     "ELF..3.2.0\0..x3.11.2\0tail"s),
            "3.11.2");
  EXPECT_EQ(python_version_in_binary("a2.7.18\0"s), "2.7.18");
  EXPECT_EQ(python_version_in_binary("a3.13.0\0"s), "3.13.0");
  EXPECT_EQ(python_version_in_binary("13.11.2\0"s), std::nullopt);           // after a digit
  EXPECT_EQ(python_version_in_binary("a3.11.2 \0"s), std::nullopt);          // not NUL-terminated
  EXPECT_EQ(python_version_in_binary("a3.11.2\0b3.11.2\0"s), std::nullopt);  // twice: unsure
  EXPECT_EQ(python_version_in_binary(""), std::nullopt);
}

// This test process as the "Python process": its root is "/", its exe is the test binary (no
// version string there, so standard-library frames stay unversioned); a package directory made
// here is read through /proc/self/root.
TEST(PythonPackages, AddsPackagesToPythonFramesOfALiveProcess) {
  TempDir t;
  fs::path site = t.path / "lib/python3.11/site-packages";
  write(site / "tiny-1.0.dist-info/METADATA", "Name: tiny\nVersion: 1.0\n");
  write(site / "tiny-1.0.dist-info/RECORD", "tiny/__init__.py,,\n");
  std::string file = (site / "tiny/__init__.py").string();
  Target target;
  target.pid = ::getpid();
  target.runtime = Runtime::python;
  Profile profile;
  Stack st;
  st.frames = {{model::FrameKind::python, "<module>", "/srv/app.py", 0, 1, {}},
               {model::FrameKind::python, "spin", file, 1, 3, {}},
               {model::FrameKind::native, "spin", file, 1, 3, {}},
               {model::FrameKind::python, "nofile", file.substr(0, file.size() - 3), 1, 3, {}}};
  st.count = 1;
  profile.stacks.push_back(st);
  add_package_versions(target, profile);
  const auto& f = profile.stacks[0].frames;
  EXPECT_EQ(f[0].package, "");
  EXPECT_EQ(f[1].package, "tiny==1.0");
  EXPECT_EQ(f[2].package, "");  // not a Python frame
  EXPECT_EQ(f[3].package, "");  // not a ".py" file
}

}  // namespace
}  // namespace gp::runtime::python
