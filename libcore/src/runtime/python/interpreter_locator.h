#pragma once
// Finds the CPython interpreter inside a running process: which mapped file holds it (the
// python executable, or libpython3.X.so when the executable links it), and the run-time
// addresses of the symbols the sampler needs (_PyRuntime, PyCode_Type, Py_Version), through
// the shared mapped-file lookup (runtime/remote/mapped_symbols.h).

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"
#include "runtime/python/python_version.h"
#include "runtime/remote/mapped_symbols.h"
#include "runtime/remote/remote_memory.h"

namespace gp::runtime::python {

using remote::ReadStatus;
using remote::RemoteMemory;

// The interpreter file among the mappings: libpython when mapped, else the python executable;
// its lowest mapping (the one the load bias is computed from). nullptr when none.
// (locate_interpreter then tries the process's own executable, whatever its name: an
// interpreter copied or linked under another name, as --python-pyspy-process names them.)
const remote::MapsEntry* pick_interpreter_mapping(const std::vector<remote::MapsEntry>& maps);

struct InterpreterInfo {
  std::string path;       // as /proc/PID/maps prints it
  PythonVersion version;  // from Py_Version (3.11+) else from the file name
  bool version_known = false;
  uint64_t runtime_address = 0;    // &_PyRuntime in the target
  uint64_t code_type_address = 0;  // &PyCode_Type, 0 when the symbol is missing
  uint64_t bias = 0;
  // The evaluation loop, _PyEval_EvalFrameDefault: [eval_start, eval_end) in the target; both 0
  // when the symbol is missing.
  uint64_t eval_start = 0;
  uint64_t eval_end = 0;
  // Set when the offsets the interpreter publishes differ from gp's table of its version: what
  // differs, for a warning (the published ones are walked).
  std::string layout_note;
};

// Error messages: "process exited" when the pid is gone; otherwise what is missing.
Result<InterpreterInfo> locate_interpreter(pid_t pid, RemoteMemory& memory,
                                           const std::string& proc_root = "/proc");

}  // namespace gp::runtime::python
