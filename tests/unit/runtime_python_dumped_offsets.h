#pragma once
// The _Py_DebugOffsets of Debian's CPython builds, as checked in under
// tests/fixtures/runtime/python/debug_offsets_3.X.txt ("slot value" lines dumped from the binaries
// by debug_offsets_tool.py), rebuilt into the bytes a target's _PyRuntime starts with.

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/python/debug_offsets.h"

namespace gp::test {

inline std::string dumped_debug_offsets(const std::string& minor) {
  std::ifstream in(std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/python/debug_offsets_" +
                   minor + ".txt");
  std::string bytes(runtime::python::kDebugOffsetsReadSize, '\0');
  std::memcpy(bytes.data(), "xdebugpy", 8);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    size_t slot = 0;
    uint64_t value = 0;
    ls >> slot >> value;
    if (slot > 0 && slot < bytes.size() / 8) std::memcpy(&bytes[slot * 8], &value, 8);
  }
  return bytes;
}

}  // namespace gp::test
