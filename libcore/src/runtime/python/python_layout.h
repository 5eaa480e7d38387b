#pragma once
// Where CPython keeps what the sampler reads: byte offsets of the fields of _PyRuntimeState,
// PyInterpreterState, PyThreadState, the frame structs, PyCodeObject and PyUnicodeObject, per
// minor version, for x86-64 and aarch64 (LP64; the structs have no arch-specific members).
//
// 3.8 - 3.12 are fixed tables: they were measured with offsetof() against each version's own
// internal headers (Include/internal, Py_BUILD_CORE) of 3.8.18, 3.9.18, 3.10.13, 3.11.2/3.11.7
// and 3.12.1. These structs do not change within a minor version's patch releases.
// 3.13+ publishes _Py_DebugOffsets at the start of _PyRuntime for out-of-process readers; gp
// reads the offsets from there (layout_from_debug_offsets) rather than trusting a table.

#include <cstdint>
#include <optional>
#include <string_view>

#include "gp/util/result.h"
#include "runtime/python/python_version.h"

namespace gp::runtime::python {

enum class FrameModel {
  frame_object,   // 3.8 - 3.10: PyThreadState.frame -> PyFrameObject, f_back chain
  cframe,         // 3.11 - 3.12: PyThreadState.cframe -> _PyCFrame.current_frame
  current_frame,  // 3.13+: PyThreadState.current_frame (a _PyInterpreterFrame)
};

struct PyLayout {
  int minor = 0;
  FrameModel frame_model = FrameModel::frame_object;
  // _PyRuntimeState
  uint32_t runtime_interpreters_head = 0;
  // GIL: in _PyRuntimeState.ceval.gil before 3.12; per interpreter from 3.12 (a pointer at
  // interp_gil_pointer to a struct _gil_runtime_state).
  bool gil_per_interpreter = false;
  uint32_t runtime_gil_last_holder = 0;  // < 3.12
  uint32_t runtime_gil_locked = 0;       // < 3.12
  uint32_t interp_gil_pointer = 0;       // 3.12+
  uint32_t gil_last_holder = 0;          // 3.12+, in struct _gil_runtime_state
  uint32_t gil_locked = 0;               // 3.12+
  // PyInterpreterState
  uint32_t interp_next = 0;
  uint32_t interp_threads_head = 0;
  // PyThreadState
  uint32_t tstate_next = 0;
  uint32_t tstate_interp = 0;
  uint32_t tstate_frame = 0;          // frame (3.8-3.10), cframe (3.11-3.12), current_frame (3.13)
  uint32_t cframe_current_frame = 0;  // 3.11-3.12
  uint32_t tstate_thread_id = 0;      // pthread_t
  std::optional<uint32_t> tstate_native_thread_id;  // 3.11+
  // PyFrameObject (3.8 - 3.10)
  uint32_t frame_back = 0;
  uint32_t frame_code = 0;
  uint32_t frame_lasti = 0;  // int: byte offset (3.8/3.9), code-unit index (3.10)
  // _PyInterpreterFrame (3.11+)
  uint32_t iframe_previous = 0;
  uint32_t iframe_code = 0;   // f_code (3.11-3.12), f_executable (3.13)
  uint32_t iframe_instr = 0;  // prev_instr (3.11-3.12), instr_ptr (3.13)
  uint32_t iframe_owner = 0;  // char
  uint32_t iframe_size = 0;   // bytes to read for one frame
  // PyCodeObject
  uint32_t code_name = 0;
  std::optional<uint32_t> code_qualname;  // 3.11+
  uint32_t code_filename = 0;
  uint32_t code_firstlineno = 0;    // int
  uint32_t code_linetable = 0;      // co_lnotab (3.8/3.9) or co_linetable (bytes)
  uint32_t code_code_adaptive = 0;  // 3.11+: first code unit, inline in the object
  uint32_t code_size = 0;           // bytes to read to cover the fields above
  // PyUnicodeObject / PyBytesObject
  uint32_t unicode_length = 16;
  uint32_t unicode_state = 32;
  uint32_t ascii_data = 48;    // sizeof(PyASCIIObject)
  uint32_t compact_data = 72;  // sizeof(PyCompactUnicodeObject)
  uint32_t bytes_size = 16;
  uint32_t bytes_data = 32;
};

// 3.11+: frames owned by the C stack (entry shims) are not Python code.
constexpr uint8_t kFrameOwnedByCStack = 3;

// The fixed table of 3.minor (8..12); nullopt for others.
std::optional<PyLayout> layout_for_minor(int minor);

// Size of the _Py_DebugOffsets prefix gp reads from the start of _PyRuntime (3.13's struct).
constexpr size_t kDebugOffsetsSize = 584;

// 3.13+: the layout from the _Py_DebugOffsets bytes at the start of _PyRuntime. Checks the
// "xdebugpy" cookie and that the recorded version is 3.13; error text says what did not match.
Result<PyLayout> layout_from_debug_offsets(std::string_view bytes);

}  // namespace gp::runtime::python
