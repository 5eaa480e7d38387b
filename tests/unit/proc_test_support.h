#pragma once
// Helpers shared by the elf/ and proc/ unit tests: the build-id binutils report for a file, and
// a throw-away directory tree to stand in for procfs or a container runtime's state.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gp::test {

// The build-id `readelf -n` prints for path, "" when it prints none (the independent oracle).
inline std::string readelf_build_id(const std::string& path) {
  const std::string cmd = "readelf -n '" + path + "' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  const size_t at = out.find("Build ID: ");
  if (at == std::string::npos) return {};
  const size_t start = at + 10;
  return out.substr(start, out.find_first_of(" \n", start) - start);
}

// A fixture owning a fresh directory under /tmp, removed after each test; write() creates a
// file (and its parent directories) below it.
class TempTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gp-tree-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void write(const std::string& rel, const std::string& text) {
    const std::string path = root_ + "/" + rel;
    std::system(("mkdir -p \"$(dirname '" + path + "')\"").c_str());
    std::ofstream(path, std::ios::binary) << text;
  }
  std::string root_;
};

}  // namespace gp::test
