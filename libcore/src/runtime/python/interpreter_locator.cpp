// Locating _PyRuntime in a live process (see interpreter_locator.h).
#include "runtime/python/interpreter_locator.h"

#include <unistd.h>

namespace gp::runtime::python {
namespace {

// The lowest mapping of the process's executable (/proc/PID/exe), or nullptr.
const remote::MapsEntry* executable_mapping(const std::vector<remote::MapsEntry>& maps, pid_t pid,
                                            const std::string& proc_root) {
  char buf[4096];
  const std::string link = proc_root + "/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0) return nullptr;
  const std::string exe(buf, static_cast<size_t>(n));
  const remote::MapsEntry* out = nullptr;
  for (const auto& m : maps)
    if (m.path == exe && (out == nullptr || m.start < out->start)) out = &m;
  return out;
}

bool is_libpython(std::string_view path) {
  auto slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with("libpython");
}

}  // namespace

const remote::MapsEntry* pick_interpreter_mapping(const std::vector<remote::MapsEntry>& maps) {
  const remote::MapsEntry* lib = nullptr;
  const remote::MapsEntry* exe = nullptr;
  for (const auto& m : maps) {
    if (m.path.ends_with(" (deleted)")
            ? !is_interpreter_file_name(m.path.substr(0, m.path.size() - 10))
            : !is_interpreter_file_name(m.path)) {
      continue;
    }
    const remote::MapsEntry*& slot = is_libpython(m.path) ? lib : exe;
    if (slot == nullptr || m.start < slot->start) slot = &m;
  }
  return lib != nullptr ? lib : exe;
}

Result<InterpreterInfo> locate_interpreter(pid_t pid, RemoteMemory& memory,
                                           const std::string& proc_root) {
  auto maps = remote::read_maps(pid, proc_root);
  if (!maps) return maps.error();
  const remote::MapsEntry* m = pick_interpreter_mapping(*maps);
  if (m == nullptr) m = executable_mapping(*maps, pid, proc_root);
  if (m == nullptr) return make_error("no python executable or libpython is mapped");
  auto syms = remote::mapped_symbols(
      pid, *m, {"_PyRuntime", "PyCode_Type", "Py_Version", "_PyEval_EvalFrameDefault"}, proc_root);
  if (!syms) return syms.error();
  auto runtime = syms->address("_PyRuntime");
  if (!runtime) {
    return make_error("'" + m->path + "' has no _PyRuntime symbol (not CPython 3.7+, or stripped)");
  }
  InterpreterInfo info;
  info.path = m->path;
  info.bias = syms->bias;
  info.runtime_address = *runtime;
  info.code_type_address = syms->address("PyCode_Type").value_or(0);
  if (auto eval = syms->address("_PyEval_EvalFrameDefault")) {
    auto size = syms->sizes.find("_PyEval_EvalFrameDefault");
    if (size != syms->sizes.end() && size->second > 0) {
      info.eval_start = *eval;
      info.eval_end = *eval + size->second;
    }
  }
  uint32_t hex = 0;
  if (auto py_version = syms->address("Py_Version");
      py_version && memory.read_value(*py_version, hex)) {
    if (auto v = version_from_hex(hex)) info.version = *v, info.version_known = true;
  }
  if (!info.version_known) {
    if (auto v = version_from_file_name(m->path)) info.version = *v, info.version_known = true;
  }
  return info;
}

}  // namespace gp::runtime::python
