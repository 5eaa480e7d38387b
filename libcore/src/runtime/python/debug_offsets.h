#pragma once
// CPython's own description of its structs for out-of-process readers: the _Py_DebugOffsets
// struct at the start of _PyRuntime (3.13+; Include/internal/pycore_debug_offsets.h, in
// pycore_runtime.h for 3.13). It opens with the cookie "xdebugpy", then PY_VERSION_HEX, a
// free-threaded flag and, per CPython struct, its size and the byte offsets of its fields, all as
// uint64. The set of fields grows with each minor version (3.14 added generator, set and
// debugger-support entries; 3.15 thread-state frame anchors, heap types and exception state), so
// the struct's own layout is known here per minor version, by field name; a minor version whose
// layout gp does not know is refused with its version named, never read by guess.
//
// Used by gp's CPython sampler (python_layout.h turns it into a PyLayout) and meant for any other
// reader of CPython's structs (a BPF unwinder fills its maps from the same values). Pure
// functions over bytes: no I/O.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "gp/util/result.h"
#include "runtime/python/python_version.h"

namespace gp::runtime::python {

// The cookie every _Py_DebugOffsets starts with.
constexpr std::string_view kDebugOffsetsCookie = "xdebugpy";

// Bytes to read from the start of _PyRuntime to hold the _Py_DebugOffsets of every known minor
// version (3.15's is the largest, 920 bytes); _PyRuntime itself is far larger.
constexpr size_t kDebugOffsetsReadSize = 1024;

// The offsets gp's readers use, in bytes from the start of each struct. Names follow the
// _Py_DebugOffsets members (struct.member).
struct DebugOffsets {
  PythonVersion version;  // from the struct's own version field (PY_VERSION_HEX)
  uint32_t version_hex = 0;
  size_t struct_size = 0;  // bytes of _Py_DebugOffsets in this minor version
  // _PyRuntimeState
  uint64_t runtime_interpreters_head = 0;
  // PyInterpreterState; the GIL state is embedded (interp._gil) and ceval.gil points to it
  uint64_t interp_next = 0;
  uint64_t interp_threads_head = 0;
  uint64_t interp_ceval_gil = 0;
  uint64_t interp_gil_runtime_state = 0;
  uint64_t interp_gil_locked = 0;  // offset in PyInterpreterState of _gil.locked
  uint64_t interp_gil_holder = 0;  // offset in PyInterpreterState of _gil.last_holder
  // PyThreadState
  uint64_t tstate_next = 0;
  uint64_t tstate_interp = 0;
  uint64_t tstate_current_frame = 0;
  uint64_t tstate_thread_id = 0;
  uint64_t tstate_native_thread_id = 0;
  // _PyInterpreterFrame
  uint64_t frame_size = 0;
  uint64_t frame_previous = 0;
  uint64_t frame_executable = 0;  // PyObject* (3.13) or _PyStackRef (3.14+, see tag_mask)
  uint64_t frame_instr_ptr = 0;
  uint64_t frame_owner = 0;
  // PyCodeObject
  uint64_t code_size = 0;
  uint64_t code_filename = 0;
  uint64_t code_name = 0;
  uint64_t code_qualname = 0;
  uint64_t code_linetable = 0;
  uint64_t code_firstlineno = 0;
  uint64_t code_co_code_adaptive = 0;
  // PyObject
  uint64_t object_ob_type = 0;
  // PyBytesObject, PyUnicodeObject
  uint64_t bytes_ob_size = 0;
  uint64_t bytes_ob_sval = 0;
  uint64_t unicode_state = 0;
  uint64_t unicode_length = 0;
  uint64_t unicode_ascii_size = 0;    // sizeof(PyASCIIObject): where ASCII data starts
  uint64_t unicode_compact_size = 0;  // sizeof(PyCompactUnicodeObject) (published from 3.15)
  // Low bits of f_executable that are tags, not address (_PyStackRef, 3.14+: Py_TAG_BITS).
  uint64_t executable_tag_mask = 0;
};

// Size of the _Py_DebugOffsets struct of 3.minor; nullopt for a minor whose layout gp does not
// know (before 3.13 there is none).
std::optional<size_t> debug_offsets_size(int minor);

// Reads _Py_DebugOffsets from the first bytes of _PyRuntime (at least kDebugOffsetsReadSize when
// the target has them). Errors name what is wrong: no cookie; a version that is not CPython 3.13+;
// a minor version whose layout gp does not know ("CPython 3.16 publishes ... gp does not know");
// a free-threaded build; offsets outside their struct (a corrupted or patched struct).
Result<DebugOffsets> parse_debug_offsets(std::string_view bytes);

}  // namespace gp::runtime::python
