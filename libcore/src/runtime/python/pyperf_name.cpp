// Python frame names as PyPerf gives them (pyperf_name.h).
#include "runtime/python/pyperf_name.h"

#include "gp/util/ascii.h"

#include <algorithm>

namespace gp::runtime::python {
namespace {

// The end of "/lib[32|64]/python2|3[.N][/site-packages|/dist-packages]" starting at `at`, or
// npos when no such prefix starts there. The optional parts are taken whenever present, as
// PyPerf's greedy pattern takes them.
size_t interpreter_dir_end(std::string_view file, size_t at) {
  std::string_view rest = file.substr(at);
  if (!rest.starts_with("/lib")) return std::string_view::npos;
  size_t i = 4;
  if (rest.substr(i).starts_with("32") || rest.substr(i).starts_with("64")) i += 2;
  if (!rest.substr(i).starts_with("/python")) return std::string_view::npos;
  i += 7;
  if (i >= rest.size() || (rest[i] != '2' && rest[i] != '3')) return std::string_view::npos;
  ++i;
  if (i + 1 < rest.size() && rest[i] == '.' && util::is_ascii_digit(rest[i + 1])) {
    for (++i; i < rest.size() && util::is_ascii_digit(rest[i]);) ++i;
  }
  for (std::string_view packages : {"/site-packages", "/dist-packages"}) {
    if (rest.substr(i).starts_with(packages)) {
      i += packages.size();
      break;
    }
  }
  return at + i;
}

}  // namespace

std::string pyperf_module(std::string_view file) {
  // 1: the last place where an interpreter's directory starts.
  for (size_t at = file.rfind("/lib"); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : file.rfind("/lib", at - 1)) {
    if (size_t end = interpreter_dir_end(file, at); end != std::string_view::npos) {
      file.remove_prefix(end);
      break;
    }
  }
  // 2: a zip import's archive, else the leading slash.
  if (size_t zip = file.find(".zip/"); zip != std::string_view::npos) {
    file.remove_prefix(zip + 5);
  } else if (file.starts_with('/')) {
    file.remove_prefix(1);
  }
  // 3: the extension.
  for (std::string_view ext : {".py", ".pyc", ".pyo"}) {
    if (file.ends_with(ext)) {
      file.remove_suffix(ext.size());
      break;
    }
  }
  std::string module(file);
  std::replace(module.begin(), module.end(), '/', '.');
  return module;
}

std::string pyperf_qualified(std::string_view qualname) {
  constexpr std::string_view kLocals = "<locals>.";
  if (size_t at = qualname.rfind(kLocals); at != std::string_view::npos)
    qualname.remove_prefix(at + kLocals.size());
  size_t last = qualname.rfind('.');
  if (last != std::string_view::npos && last > 0) {
    size_t before = qualname.rfind('.', last - 1);
    if (before != std::string_view::npos) qualname.remove_prefix(before + 1);
  }
  return std::string(qualname);
}

std::string pyperf_frame_name(std::string_view file, std::string_view qualname) {
  std::string name = pyperf_qualified(qualname);
  if (file.empty()) return name;
  return pyperf_module(file) + "." + name;
}

}  // namespace gp::runtime::python
