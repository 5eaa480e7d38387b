// Reading CPython's _Py_DebugOffsets (see debug_offsets.h).
#include "runtime/python/debug_offsets.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

namespace gp::runtime::python {
namespace {

// cookie, version and free_threaded open every version's struct.
constexpr size_t kCommonHead = 24;

// The members of _Py_DebugOffsets in declaration order, one per uint64 slot ("cookie" is the
// 8-byte char array), as each minor version's pycore_debug_offsets.h declares them.

constexpr std::string_view kLayout313[] = {
    "cookie", "version", "free_threaded", "runtime_state.size", "runtime_state.finalizing",
    "runtime_state.interpreters_head",
    // interpreter_state
    "interp.size", "interp.id", "interp.next", "interp.threads_head", "interp.gc",
    "interp.imports_modules", "interp.sysdict", "interp.builtins", "interp.ceval_gil",
    "interp.gil_runtime_state", "interp.gil_runtime_state_enabled",
    "interp.gil_runtime_state_locked", "interp.gil_runtime_state_holder",
    // thread_state
    "tstate.size", "tstate.prev", "tstate.next", "tstate.interp", "tstate.current_frame",
    "tstate.thread_id", "tstate.native_thread_id", "tstate.datastack_chunk", "tstate.status",
    // interpreter_frame
    "frame.size", "frame.previous", "frame.executable", "frame.instr_ptr", "frame.localsplus",
    "frame.owner",
    // code_object
    "code.size", "code.filename", "code.name", "code.qualname", "code.linetable",
    "code.firstlineno", "code.argcount", "code.localsplusnames", "code.localspluskinds",
    "code.co_code_adaptive",
    // pyobject, type_object, tuple_object, list_object, dict_object, float_object, long_object
    "pyobject.size", "pyobject.ob_type", "type.size", "type.tp_name", "type.tp_repr",
    "type.tp_flags", "tuple.size", "tuple.ob_item", "tuple.ob_size", "list.size", "list.ob_item",
    "list.ob_size", "dict.size", "dict.ma_keys", "dict.ma_values", "float.size", "float.ob_fval",
    "long.size", "long.lv_tag", "long.ob_digit",
    // bytes_object, unicode_object, gc
    "bytes.size", "bytes.ob_size", "bytes.ob_sval", "unicode.size", "unicode.state",
    "unicode.length", "unicode.asciiobject_size", "gc.size", "gc.collecting"};

constexpr std::string_view kLayout314[] = {
    "cookie", "version", "free_threaded", "runtime_state.size", "runtime_state.finalizing",
    "runtime_state.interpreters_head",
    // interpreter_state: + threads_main, code_object_generation, tlbc_generation
    "interp.size", "interp.id", "interp.next", "interp.threads_head", "interp.threads_main",
    "interp.gc", "interp.imports_modules", "interp.sysdict", "interp.builtins", "interp.ceval_gil",
    "interp.gil_runtime_state", "interp.gil_runtime_state_enabled",
    "interp.gil_runtime_state_locked", "interp.gil_runtime_state_holder",
    "interp.code_object_generation", "interp.tlbc_generation",
    // thread_state
    "tstate.size", "tstate.prev", "tstate.next", "tstate.interp", "tstate.current_frame",
    "tstate.thread_id", "tstate.native_thread_id", "tstate.datastack_chunk", "tstate.status",
    // interpreter_frame: + stackpointer, tlbc_index
    "frame.size", "frame.previous", "frame.executable", "frame.instr_ptr", "frame.localsplus",
    "frame.owner", "frame.stackpointer", "frame.tlbc_index",
    // code_object: + co_tlbc
    "code.size", "code.filename", "code.name", "code.qualname", "code.linetable",
    "code.firstlineno", "code.argcount", "code.localsplusnames", "code.localspluskinds",
    "code.co_code_adaptive", "code.co_tlbc", "pyobject.size", "pyobject.ob_type", "type.size",
    "type.tp_name", "type.tp_repr", "type.tp_flags", "tuple.size", "tuple.ob_item", "tuple.ob_size",
    "list.size", "list.ob_item", "list.ob_size",
    // + set_object
    "set.size", "set.used", "set.table", "set.mask", "dict.size", "dict.ma_keys", "dict.ma_values",
    "float.size", "float.ob_fval", "long.size", "long.lv_tag", "long.ob_digit", "bytes.size",
    "bytes.ob_size", "bytes.ob_sval", "unicode.size", "unicode.state", "unicode.length",
    "unicode.asciiobject_size", "gc.size", "gc.collecting",
    // + gen_object, llist_node, debugger_support
    "gen.size", "gen.gi_name", "gen.gi_iframe", "gen.gi_frame_state", "llist.next", "llist.prev",
    "debugger.eval_breaker", "debugger.remote_debugger_support",
    "debugger.remote_debugging_enabled", "debugger.debugger_pending_call",
    "debugger.debugger_script_path", "debugger.debugger_script_path_size"};

constexpr std::string_view kLayout315[] = {
    "cookie", "version", "free_threaded", "runtime_state.size", "runtime_state.finalizing",
    "runtime_state.interpreters_head", "interp.size", "interp.id", "interp.next",
    "interp.threads_head", "interp.threads_main", "interp.gc", "interp.imports_modules",
    "interp.sysdict", "interp.builtins", "interp.ceval_gil", "interp.gil_runtime_state",
    "interp.gil_runtime_state_enabled", "interp.gil_runtime_state_locked",
    "interp.gil_runtime_state_holder", "interp.code_object_generation", "interp.tlbc_generation",
    // thread_state: + base_frame, last_profiled_frame(_seq), holds_gil, gil_requested,
    // current_exception, exc_state
    "tstate.size", "tstate.prev", "tstate.next", "tstate.interp", "tstate.current_frame",
    "tstate.base_frame", "tstate.last_profiled_frame", "tstate.last_profiled_frame_seq",
    "tstate.thread_id", "tstate.native_thread_id", "tstate.datastack_chunk", "tstate.status",
    "tstate.holds_gil", "tstate.gil_requested", "tstate.current_exception", "tstate.exc_state",
    // + err_stackitem
    "err_stackitem.exc_value", "frame.size", "frame.previous", "frame.executable",
    "frame.instr_ptr", "frame.localsplus", "frame.owner", "frame.stackpointer", "frame.tlbc_index",
    "code.size", "code.filename", "code.name", "code.qualname", "code.linetable",
    "code.firstlineno", "code.argcount", "code.localsplusnames", "code.localspluskinds",
    "code.co_code_adaptive", "code.co_tlbc",
    // type_object: + tp_basicsize, tp_dictoffset; + heap_type_object
    "pyobject.size", "pyobject.ob_type", "type.size", "type.tp_name", "type.tp_repr",
    "type.tp_flags", "type.tp_basicsize", "type.tp_dictoffset", "heap_type.size",
    "heap_type.ht_cached_keys", "tuple.size", "tuple.ob_item", "tuple.ob_size", "list.size",
    "list.ob_item", "list.ob_size", "set.size", "set.used", "set.table", "set.mask", "dict.size",
    "dict.ma_keys", "dict.ma_values", "float.size", "float.ob_fval", "long.size", "long.lv_tag",
    "long.ob_digit", "bytes.size", "bytes.ob_size", "bytes.ob_sval",
    // unicode_object: + compactunicodeobject_size; gc: + frame, generation_stats(_size)
    "unicode.size", "unicode.state", "unicode.length", "unicode.asciiobject_size",
    "unicode.compactunicodeobject_size", "gc.size", "gc.collecting", "gc.frame",
    "gc.generation_stats_size", "gc.generation_stats", "gen.size", "gen.gi_name", "gen.gi_iframe",
    "gen.gi_frame_state", "llist.next", "llist.prev", "debugger.eval_breaker",
    "debugger.remote_debugger_support", "debugger.remote_debugging_enabled",
    "debugger.debugger_pending_call", "debugger.debugger_script_path",
    "debugger.debugger_script_path_size"};

std::span<const std::string_view> layout_of(int minor) {
  switch (minor) {
    case 13:
      return kLayout313;
    case 14:
      return kLayout314;
    case 15:
      return kLayout315;
    default:
      return {};
  }
}

// Offsets farther than this into any CPython struct are not offsets but garbage.
constexpr uint64_t kMaxStructSize = 1u << 20;

class Reader {
 public:
  Reader(std::string_view bytes, std::span<const std::string_view> names)
      : bytes_(bytes), names_(names) {}
  // The value of member `name`; 0 (and a recorded error) when the layout has no such member.
  uint64_t get(std::string_view name) {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) {
      missing_ = std::string(name);
      return 0;
    }
    uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + 8 * static_cast<size_t>(it - names_.begin()), sizeof v);
    return v;
  }
  bool has(std::string_view name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }
  const std::string& missing() const { return missing_; }

 private:
  std::string_view bytes_;
  std::span<const std::string_view> names_;
  std::string missing_;
};

// The members gp uses, by name; r records the first one this version's layout lacks.
void read_fields(Reader& r, DebugOffsets& d) {
  d.runtime_interpreters_head = r.get("runtime_state.interpreters_head");
  d.interp_next = r.get("interp.next");
  d.interp_threads_head = r.get("interp.threads_head");
  d.interp_ceval_gil = r.get("interp.ceval_gil");
  d.interp_gil_runtime_state = r.get("interp.gil_runtime_state");
  d.interp_gil_locked = r.get("interp.gil_runtime_state_locked");
  d.interp_gil_holder = r.get("interp.gil_runtime_state_holder");
  d.tstate_next = r.get("tstate.next");
  d.tstate_interp = r.get("tstate.interp");
  d.tstate_current_frame = r.get("tstate.current_frame");
  d.tstate_thread_id = r.get("tstate.thread_id");
  d.tstate_native_thread_id = r.get("tstate.native_thread_id");
  d.frame_size = r.get("frame.size");
  d.frame_previous = r.get("frame.previous");
  d.frame_executable = r.get("frame.executable");
  d.frame_instr_ptr = r.get("frame.instr_ptr");
  d.frame_owner = r.get("frame.owner");
  d.code_size = r.get("code.size");
  d.code_filename = r.get("code.filename");
  d.code_name = r.get("code.name");
  d.code_qualname = r.get("code.qualname");
  d.code_linetable = r.get("code.linetable");
  d.code_firstlineno = r.get("code.firstlineno");
  d.code_co_code_adaptive = r.get("code.co_code_adaptive");
  d.object_ob_type = r.get("pyobject.ob_type");
  d.bytes_ob_size = r.get("bytes.ob_size");
  d.bytes_ob_sval = r.get("bytes.ob_sval");
  d.unicode_state = r.get("unicode.state");
  d.unicode_length = r.get("unicode.length");
  d.unicode_ascii_size = r.get("unicode.asciiobject_size");
  // PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject (3.12+); published
  // only from 3.15.
  d.unicode_compact_size = r.has("unicode.compactunicodeobject_size")
                               ? r.get("unicode.compactunicodeobject_size")
                               : d.unicode_ascii_size + 16;
  // 3.14 made f_executable a _PyStackRef whose low bits tag the reference (Py_TAG_BITS = 3);
  // CPython's own remote reader masks them. 3.13's is a plain PyObject*.
  d.executable_tag_mask = d.version.minor >= 14 ? 3 : 0;
}

// Each offset must lie inside its struct, whose size the struct publishes too.
Status check_inside(const DebugOffsets& d) {
  if (d.frame_size > kMaxStructSize || d.code_size > kMaxStructSize) {
    return make_error("_Py_DebugOffsets holds implausible struct sizes");
  }
  for (uint64_t off : {d.frame_previous, d.frame_executable, d.frame_instr_ptr, d.frame_owner}) {
    if (off + 1 > d.frame_size) {
      return make_error("_Py_DebugOffsets: a frame offset lies outside _PyInterpreterFrame");
    }
  }
  for (uint64_t off : {d.code_filename, d.code_name, d.code_qualname, d.code_linetable,
                       d.code_firstlineno, d.code_co_code_adaptive}) {
    if (off + 4 > d.code_size) {
      return make_error("_Py_DebugOffsets: a code offset lies outside PyCodeObject");
    }
  }
  for (uint64_t off : {d.runtime_interpreters_head, d.interp_next, d.interp_threads_head,
                       d.interp_ceval_gil, d.interp_gil_locked, d.interp_gil_holder, d.tstate_next,
                       d.tstate_interp, d.tstate_current_frame, d.tstate_thread_id,
                       d.tstate_native_thread_id, d.bytes_ob_sval, d.unicode_compact_size}) {
    if (off > kMaxStructSize) return make_error("_Py_DebugOffsets holds implausible offsets");
  }
  // Objects start with ob_refcnt then ob_type in every GIL build; anything else is not a
  // struct gp can read (or not a _Py_DebugOffsets at all).
  if (d.object_ob_type != 8 || d.unicode_ascii_size < 24 || d.unicode_ascii_size > 128 ||
      d.unicode_compact_size < d.unicode_ascii_size) {
    return make_error("_Py_DebugOffsets holds implausible object offsets");
  }
  return ok_status();
}

}  // namespace

std::optional<size_t> debug_offsets_size(int minor) {
  auto names = layout_of(minor);
  if (names.empty()) return std::nullopt;
  return names.size() * 8;
}

Result<DebugOffsets> parse_debug_offsets(std::string_view bytes) {
  if (bytes.size() < kCommonHead || bytes.substr(0, 8) != kDebugOffsetsCookie) {
    return make_error("no _Py_DebugOffsets at the start of _PyRuntime (cookie 'xdebugpy')");
  }
  uint64_t hex = 0;
  std::memcpy(&hex, bytes.data() + 8, sizeof hex);
  auto version = hex <= 0xffffffff ? version_from_hex(static_cast<uint32_t>(hex)) : std::nullopt;
  if (!version || version->minor < 13) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(hex));
    return make_error(std::string("_Py_DebugOffsets names no CPython 3.13+ version (") + text +
                      ")");
  }
  auto names = layout_of(version->minor);
  if (names.empty()) {
    return make_error("CPython " + version->text() +
                      " publishes its offsets in a _Py_DebugOffsets layout gp does not know "
                      "(gp knows 3.13 - 3.15)");
  }
  if (bytes.size() < names.size() * 8) {
    return make_error("_Py_DebugOffsets of CPython " + version->text() + " is cut short");
  }
  Reader r(bytes, names);
  if (r.get("free_threaded") != 0) {
    return make_error("free-threaded CPython builds (" + version->text() +
                      "t) are not supported by gp's sampler");
  }
  DebugOffsets d;
  d.version = *version;
  d.version_hex = static_cast<uint32_t>(hex);
  d.struct_size = names.size() * 8;
  read_fields(r, d);
  if (!r.missing().empty()) return make_error("_Py_DebugOffsets has no '" + r.missing() + "'");
  if (auto ok = check_inside(d); !ok) return ok.error();
  return d;
}

}  // namespace gp::runtime::python
