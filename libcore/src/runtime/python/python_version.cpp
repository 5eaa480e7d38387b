// CPython version from file names and PY_VERSION_HEX.
#include "runtime/python/python_version.h"

#include <cctype>

namespace gp::runtime::python {
namespace {

std::string_view base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Parses "<digits>.<digits>" at the start of s; returns the characters consumed (0 = none).
size_t parse_major_minor(std::string_view s, int& major, int& minor) {
  size_t i = 0;
  auto number = [&](int& out) {
    size_t start = i;
    out = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 3) {
      out = out * 10 + (s[i++] - '0');
    }
    return i > start;
  };
  if (!number(major) || i >= s.size() || s[i] != '.') return 0;
  ++i;
  if (!number(minor)) return 0;
  return i;
}

}  // namespace

std::string PythonVersion::text() const {
  std::string t = std::to_string(major) + "." + std::to_string(minor);
  if (micro >= 0) t += "." + std::to_string(micro);
  return t;
}

std::optional<PythonVersion> version_from_file_name(std::string_view path) {
  std::string_view name = base_name(path);
  if (name.starts_with("lib")) name.remove_prefix(3);
  if (!name.starts_with("python")) return std::nullopt;
  name.remove_prefix(6);
  PythonVersion v;
  size_t used = parse_major_minor(name, v.major, v.minor);
  if (used == 0) return std::nullopt;
  // What may follow: ABI flags (d, m, u, t), ".so...", or nothing.
  std::string_view rest = name.substr(used);
  while (!rest.empty() && (rest[0] == 'd' || rest[0] == 'm' || rest[0] == 'u' || rest[0] == 't')) {
    rest.remove_prefix(1);
  }
  if (!rest.empty() && !rest.starts_with(".so")) return std::nullopt;
  return v;
}

std::optional<PythonVersion> version_from_hex(uint32_t hex) {
  PythonVersion v{static_cast<int>(hex >> 24), static_cast<int>((hex >> 16) & 0xff),
                  static_cast<int>((hex >> 8) & 0xff)};
  uint32_t level = (hex >> 4) & 0xf;  // 0xA alpha, 0xB beta, 0xC candidate, 0xF final
  if (v.major != 3 || v.minor > 50 || level < 0xA) return std::nullopt;
  return v;
}

bool is_interpreter_file_name(std::string_view path) {
  if (version_from_file_name(path)) return true;
  // Unversioned executables ("python", "python3", venv copies) may hold the interpreter too.
  std::string_view name = base_name(path);
  return name == "python" || name == "python3";
}

}  // namespace gp::runtime::python
