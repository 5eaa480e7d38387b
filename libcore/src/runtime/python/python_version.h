#pragma once
// CPython version detection for gp's own sampler: from the interpreter's file name
// ("python3.11", "libpython3.12.so.1.0") and from the `Py_Version` data symbol (3.11+), whose
// value is PY_VERSION_HEX (0x030B02F0 = 3.11.2 final).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gp::runtime::python {

struct PythonVersion {
  int major = 0;
  int minor = 0;
  int micro = -1;  // -1 when only major.minor is known (from a file name)

  // "3.11" or "3.11.2".
  std::string text() const;
  // 3.8 .. 3.15: the versions whose layouts gp knows (3.13+ walked by the offsets they
  // publish).
  bool supported() const { return major == 3 && minor >= 8 && minor <= 15; }
};

// Version from a path's file name: "python3.11", "python3.11d", "libpython3.12.so.1.0",
// "libpython3.9d.so". nullopt for "python3", "python", or anything else.
std::optional<PythonVersion> version_from_file_name(std::string_view path);

// Version from a PY_VERSION_HEX value; nullopt when it does not look like CPython 3.x.
std::optional<PythonVersion> version_from_hex(uint32_t hex);

// True for mapping paths that can hold the interpreter: a python executable or libpython.
bool is_interpreter_file_name(std::string_view path);

}  // namespace gp::runtime::python
