// Per-version CPython layouts (see python_layout.h for where the numbers come from).
#include "runtime/python/python_layout.h"

#include <algorithm>
#include <string>

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
  l.iframe_is_entry = 68;
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
  l.iframe_is_entry.reset();  // entry shims instead (FRAME_OWNED_BY_CSTACK)
  l.code_firstlineno = 68;
  l.code_code_adaptive = 192;
  l.ascii_data = 40;  // 3.12 dropped the wstr fields
  l.compact_data = 56;
  return l;
}

// 3.13 - 3.15 as Debian's builds publish them in _Py_DebugOffsets (x86-64; the same structs on
// every LP64 GIL build of a minor version). The fields that moved between these versions:
struct PublishedMoves {
  uint32_t interpreters_head, interp_next, threads_head, tstate_thread_id, iframe_owner;
  uint32_t code_adaptive;
};

PyLayout published_layout(int minor, PublishedMoves m) {
  PyLayout l = layout_312();
  l.minor = minor;
  l.frame_model = FrameModel::current_frame;
  l.runtime_interpreters_head = m.interpreters_head;
  l.interp_gil_pointer = 16;  // ceval.gil
  l.gil_last_holder = 8;
  l.gil_locked = 16;
  l.interp_next = m.interp_next;
  l.interp_threads_head = m.threads_head;
  l.tstate_frame = 72;  // current_frame
  l.tstate_thread_id = m.tstate_thread_id;
  l.tstate_native_thread_id = m.tstate_thread_id + 8;
  l.iframe_previous = 8;
  l.iframe_code = 0;
  l.code_tag_mask = minor >= 14 ? 3 : 0;
  l.iframe_instr = 56;
  l.iframe_owner = m.iframe_owner;
  l.iframe_size = m.iframe_owner + 8;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_firstlineno = 68;
  l.code_code_adaptive = m.code_adaptive;
  l.code_size = 144;
  return l;
}

}  // namespace

std::optional<PyLayout> layout_for_minor(int minor) {
  if (minor >= 8 && minor <= 10) return frame_object_layout(minor);
  if (minor == 11) return layout_311();
  if (minor == 12) return layout_312();
  if (minor == 13) return published_layout(13, {632, 7264, 7344, 152, 70, 200});
  if (minor == 14) return published_layout(14, {808, 7272, 7344, 152, 74, 208});
  if (minor == 15) return published_layout(15, {936, 7264, 7336, 176, 74, 208});
  return std::nullopt;
}

PyLayout layout_from_debug_offsets(const DebugOffsets& d) {
  auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };  // checked < 1 MiB
  PyLayout l;
  l.minor = d.version.minor;
  l.frame_model = FrameModel::current_frame;
  l.runtime_interpreters_head = u32(d.runtime_interpreters_head);
  l.gil_per_interpreter = true;
  l.interp_gil_pointer = u32(d.interp_ceval_gil);
  // ceval.gil points at the interpreter's own _gil, whose fields are published as offsets
  // in PyInterpreterState.
  l.gil_last_holder = u32(d.interp_gil_holder - d.interp_gil_runtime_state);
  l.gil_locked = u32(d.interp_gil_locked - d.interp_gil_runtime_state);
  l.interp_next = u32(d.interp_next);
  l.interp_threads_head = u32(d.interp_threads_head);
  l.tstate_next = u32(d.tstate_next);
  l.tstate_interp = u32(d.tstate_interp);
  l.tstate_frame = u32(d.tstate_current_frame);
  l.tstate_thread_id = u32(d.tstate_thread_id);
  l.tstate_native_thread_id = u32(d.tstate_native_thread_id);
  l.iframe_previous = u32(d.frame_previous);
  l.iframe_code = u32(d.frame_executable);
  l.code_tag_mask = d.executable_tag_mask;
  l.iframe_instr = u32(d.frame_instr_ptr);
  l.iframe_owner = u32(d.frame_owner);
  l.iframe_size = std::max({l.iframe_previous, l.iframe_code, l.iframe_instr, l.iframe_owner}) + 8;
  l.code_name = u32(d.code_name);
  l.code_qualname = u32(d.code_qualname);
  l.code_filename = u32(d.code_filename);
  l.code_firstlineno = u32(d.code_firstlineno);
  l.code_linetable = u32(d.code_linetable);
  l.code_code_adaptive = u32(d.code_co_code_adaptive);
  l.code_size = std::max({l.code_name, *l.code_qualname, l.code_filename, l.code_firstlineno,
                          l.code_linetable}) +
                8;
  l.bytes_size = u32(d.bytes_ob_size);
  l.bytes_data = u32(d.bytes_ob_sval);
  l.unicode_state = u32(d.unicode_state);
  l.unicode_length = u32(d.unicode_length);
  l.ascii_data = u32(d.unicode_ascii_size);
  l.compact_data = u32(d.unicode_compact_size);
  return l;
}

std::string layout_differences(const PyLayout& a, const PyLayout& b) {
  struct Field {
    const char* name;
    uint32_t PyLayout::*member;
  };
  static constexpr Field kFields[] = {
      {"runtime.interpreters_head", &PyLayout::runtime_interpreters_head},
      {"interp.ceval_gil", &PyLayout::interp_gil_pointer},
      {"gil.last_holder", &PyLayout::gil_last_holder},
      {"gil.locked", &PyLayout::gil_locked},
      {"interp.next", &PyLayout::interp_next},
      {"interp.threads_head", &PyLayout::interp_threads_head},
      {"tstate.next", &PyLayout::tstate_next},
      {"tstate.current_frame", &PyLayout::tstate_frame},
      {"tstate.thread_id", &PyLayout::tstate_thread_id},
      {"frame.previous", &PyLayout::iframe_previous},
      {"frame.executable", &PyLayout::iframe_code},
      {"frame.instr_ptr", &PyLayout::iframe_instr},
      {"frame.owner", &PyLayout::iframe_owner},
      {"code.name", &PyLayout::code_name},
      {"code.filename", &PyLayout::code_filename},
      {"code.firstlineno", &PyLayout::code_firstlineno},
      {"code.linetable", &PyLayout::code_linetable},
      {"code.co_code_adaptive", &PyLayout::code_code_adaptive},
      {"unicode.state", &PyLayout::unicode_state},
      {"unicode.length", &PyLayout::unicode_length},
      {"unicode.asciiobject_size", &PyLayout::ascii_data},
      {"bytes.ob_size", &PyLayout::bytes_size},
      {"bytes.ob_sval", &PyLayout::bytes_data},
  };
  std::string out;
  auto add = [&](const char* name) { out += (out.empty() ? "" : ", ") + std::string(name); };
  for (const auto& f : kFields) {
    if (a.*f.member != b.*f.member) add(f.name);
  }
  if (a.code_qualname != b.code_qualname) add("code.qualname");
  if (a.tstate_native_thread_id != b.tstate_native_thread_id) add("tstate.native_thread_id");
  if (a.code_tag_mask != b.code_tag_mask) add("frame.executable tag bits");
  return out;
}

}  // namespace gp::runtime::python
