// Per-version CPython layouts (see python_layout.h for where the numbers come from).
#include "runtime/python/python_layout.h"

#include <algorithm>
#include <cstring>

namespace gp::runtime::python {
namespace {

PyLayout frame_object_layout(int minor) {
  PyLayout l;
  l.minor = minor;
  l.frame_model = FrameModel::frame_object;
  l.runtime_interpreters_head = 32;
  l.runtime_gil_last_holder = minor == 8 ? 1160 : 360;
  l.runtime_gil_locked = minor == 8 ? 1168 : 368;
  l.interp_next = 0;
  l.interp_threads_head = 8;  // tstate_head
  l.tstate_next = 8;
  l.tstate_interp = 16;
  l.tstate_frame = 24;
  l.tstate_thread_id = 176;
  l.frame_back = 24;
  l.frame_code = 32;
  l.frame_lasti = minor == 10 ? 96 : 104;
  l.iframe_size = 112;  // enough of PyFrameObject for f_back, f_code and f_lasti
  l.code_name = 112;
  l.code_filename = 104;
  l.code_firstlineno = 40;
  l.code_linetable = 120;  // co_lnotab (3.8/3.9), co_linetable (3.10)
  l.code_size = 128;
  return l;
}

PyLayout layout_311() {
  PyLayout l;
  l.minor = 11;
  l.frame_model = FrameModel::cframe;
  l.runtime_interpreters_head = 40;
  l.runtime_gil_last_holder = 368;
  l.runtime_gil_locked = 376;
  l.interp_next = 0;
  l.interp_threads_head = 16;
  l.tstate_next = 8;
  l.tstate_interp = 16;
  l.tstate_frame = 56;
  l.cframe_current_frame = 8;
  l.tstate_thread_id = 152;
  l.tstate_native_thread_id = 160;
  l.iframe_previous = 48;
  l.iframe_code = 32;
  l.iframe_instr = 56;
  l.iframe_owner = 69;
  l.iframe_size = 72;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_filename = 112;
  l.code_firstlineno = 72;
  l.code_linetable = 136;
  l.code_code_adaptive = 184;
  l.code_size = 144;
  return l;
}

PyLayout layout_312() {
  PyLayout l = layout_311();
  l.minor = 12;
  l.gil_per_interpreter = true;
  l.interp_gil_pointer = 384;  // ceval.gil
  l.gil_last_holder = 8;
  l.gil_locked = 16;
  l.interp_threads_head = 72;
  l.cframe_current_frame = 0;
  l.tstate_thread_id = 136;
  l.tstate_native_thread_id = 144;
  l.iframe_previous = 8;
  l.iframe_code = 0;
  l.iframe_owner = 70;
  l.code_firstlineno = 68;
  l.code_code_adaptive = 192;
  l.ascii_data = 40;  // 3.12 dropped the wstr fields
  l.compact_data = 56;
  return l;
}

// The 3.13 _Py_DebugOffsets struct, as uint64 slots (Include/internal/pycore_runtime.h).
namespace slot {
constexpr size_t kVersion = 1, kFreeThreaded = 2, kInterpretersHead = 5;
constexpr size_t kInterpNext = 8, kThreadsHead = 9, kCevalGil = 14, kGilState = 15;
constexpr size_t kGilLocked = 17, kGilHolder = 18;
constexpr size_t kTstateNext = 21, kTstateInterp = 22, kCurrentFrame = 23, kThreadId = 24;
constexpr size_t kNativeThreadId = 25;
constexpr size_t kFrameSize = 28, kPrevious = 29, kExecutable = 30, kInstrPtr = 31, kOwner = 33;
constexpr size_t kCodeFilename = 35, kCodeName = 36, kCodeQualname = 37, kCodeLinetable = 38;
constexpr size_t kCodeFirstlineno = 39, kCodeAdaptive = 43;
constexpr size_t kBytesSize = 65, kBytesData = 66;
constexpr size_t kUnicodeState = 68, kUnicodeLength = 69, kAsciiSize = 70;
}  // namespace slot

}  // namespace

std::optional<PyLayout> layout_for_minor(int minor) {
  if (minor >= 8 && minor <= 10) return frame_object_layout(minor);
  if (minor == 11) return layout_311();
  if (minor == 12) return layout_312();
  return std::nullopt;
}

Result<PyLayout> layout_from_debug_offsets(std::string_view bytes) {
  if (bytes.size() < kDebugOffsetsSize || bytes.substr(0, 8) != "xdebugpy") {
    return make_error("no _Py_DebugOffsets at the start of _PyRuntime (cookie 'xdebugpy')");
  }
  auto at = [&](size_t index) {
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + index * 8, sizeof v);
    return v;
  };
  auto version = version_from_hex(static_cast<uint32_t>(at(slot::kVersion)));
  if (!version || version->minor != 13) {
    return make_error("_Py_DebugOffsets of an unsupported version (" +
                      (version ? version->text() : std::string("unknown")) + ")");
  }
  // Free-threaded builds (3.13t) have another object header: none of the fixed sizes hold.
  if (at(slot::kFreeThreaded) != 0) {
    return make_error("free-threaded CPython builds are not supported by gp's sampler");
  }
  // Every offset must be small: a garbage struct would send the walker anywhere.
  for (size_t i = slot::kInterpretersHead; i <= slot::kAsciiSize; ++i) {
    if (at(i) > (1u << 20)) return make_error("_Py_DebugOffsets holds implausible offsets");
  }
  auto u32 = [&](size_t index) { return static_cast<uint32_t>(at(index)); };
  PyLayout l;
  l.minor = 13;
  l.frame_model = FrameModel::current_frame;
  l.runtime_interpreters_head = u32(slot::kInterpretersHead);
  l.gil_per_interpreter = true;
  l.interp_gil_pointer = u32(slot::kCevalGil);
  l.gil_last_holder = u32(slot::kGilHolder) - u32(slot::kGilState);
  l.gil_locked = u32(slot::kGilLocked) - u32(slot::kGilState);
  l.interp_next = u32(slot::kInterpNext);
  l.interp_threads_head = u32(slot::kThreadsHead);
  l.tstate_next = u32(slot::kTstateNext);
  l.tstate_interp = u32(slot::kTstateInterp);
  l.tstate_frame = u32(slot::kCurrentFrame);
  l.tstate_thread_id = u32(slot::kThreadId);
  l.tstate_native_thread_id = u32(slot::kNativeThreadId);
  l.iframe_previous = u32(slot::kPrevious);
  l.iframe_code = u32(slot::kExecutable);
  l.iframe_instr = u32(slot::kInstrPtr);
  l.iframe_owner = u32(slot::kOwner);
  l.iframe_size = std::max({l.iframe_previous, l.iframe_code, l.iframe_instr, l.iframe_owner}) + 8;
  l.code_name = u32(slot::kCodeName);
  l.code_qualname = u32(slot::kCodeQualname);
  l.code_filename = u32(slot::kCodeFilename);
  l.code_firstlineno = u32(slot::kCodeFirstlineno);
  l.code_linetable = u32(slot::kCodeLinetable);
  l.code_code_adaptive = u32(slot::kCodeAdaptive);
  l.code_size = std::max({l.code_name, *l.code_qualname, l.code_filename, l.code_firstlineno,
                          l.code_linetable}) +
                8;
  l.bytes_size = u32(slot::kBytesSize);
  l.bytes_data = u32(slot::kBytesData);
  l.unicode_state = u32(slot::kUnicodeState);
  l.unicode_length = u32(slot::kUnicodeLength);
  l.ascii_data = u32(slot::kAsciiSize);
  // PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject; not in the debug offsets.
  l.compact_data = l.ascii_data + 16;
  return l;
}

}  // namespace gp::runtime::python
