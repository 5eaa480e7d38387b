#pragma once
// Where CPython keeps what the sampler reads: byte offsets of the fields of _PyRuntimeState,
// PyInterpreterState, PyThreadState, the frame structs, PyCodeObject and PyUnicodeObject, per
// minor version, for x86-64 and aarch64 (LP64; the structs have no arch-specific members).
//
// 3.8 - 3.12 are fixed tables: they were measured with offsetof() against each version's own
// internal headers (Include/internal, Py_BUILD_CORE) of 3.8.18, 3.9.18, 3.10.13, 3.11.2/3.11.7
// and 3.12.1. These structs do not change within a minor version's patch releases.
// 3.13+ publishes _Py_DebugOffsets at the start of _PyRuntime for out-of-process readers
// (debug_offsets.h); gp walks by the offsets read from there (layout_from_debug_offsets). Its
// tables of 3.13 - 3.15 (what Debian's builds publish, x86-64) are only a cross-check: published
// offsets that differ from them are named (layout_differences), and still what is walked.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gp/util/result.h"
#include "runtime/python/debug_offsets.h"
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
  uint32_t iframe_code = 0;    // f_code (3.11-3.12), f_executable (3.13+)
  uint64_t code_tag_mask = 0;  // low bits of iframe_code that tag a _PyStackRef (3.14+)
  uint32_t iframe_instr = 0;   // prev_instr (3.11-3.12), instr_ptr (3.13+)
  uint32_t iframe_owner = 0;   // char
  std::optional<uint32_t> iframe_is_entry;  // 3.11: bool, set on the frame an evaluation loop call
                                            // starts with
  uint32_t iframe_size = 0;                 // bytes to read for one frame
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

// 3.12+: frames whose owner is this or above are not Python code: the C stack's entry shims
// (FRAME_OWNED_BY_CSTACK = 3 in 3.12/3.13, 4 in 3.14) and the interpreter's own base frames
// (FRAME_OWNED_BY_INTERPRETER = 3 from 3.14).
constexpr uint8_t kFrameOwnedByCStack = 3;

// gp's table of 3.minor: 8..12 (walked), 13..15 (the cross-check of published offsets);
// nullopt for others.
std::optional<PyLayout> layout_for_minor(int minor);

// 3.13+: the layout of the published offsets.
PyLayout layout_from_debug_offsets(const DebugOffsets& offsets);

// The names of the fields whose offsets differ between two layouts of one version, comma
// separated; empty when they agree.
std::string layout_differences(const PyLayout& a, const PyLayout& b);

}  // namespace gp::runtime::python
