// Walking CPython thread stacks from another process (see frame_walker.h).
#include "runtime/python/frame_walker.h"

#include <algorithm>
#include <cstring>

#include "runtime/python/line_table.h"
#include "util/utf8.h"

namespace gp::runtime::python {
namespace {

template <typename T>
T field(const std::string& buf, uint32_t offset) {
  T v{};
  if (offset + sizeof v <= buf.size()) std::memcpy(&v, buf.data() + offset, sizeof v);
  return v;
}

constexpr size_t kMaxCachedCode = 100000;
constexpr size_t kMaxLineTable = 1 << 16;

}  // namespace

FrameWalker::FrameWalker(RemoteMemory& memory, PyLayout layout, uint64_t runtime_address,
                         uint64_t code_type_address, WalkLimits limits)
    : memory_(memory),
      layout_(layout),
      runtime_(runtime_address),
      code_type_(code_type_address),
      limits_(limits) {}

WalkStatus FrameWalker::failure() const { return remote::walk_status_of(memory_.last_failure()); }

WalkStatus FrameWalker::sample(std::vector<ThreadSample>& out) {
  out.clear();
  uint64_t interp = 0;
  if (!memory_.read_value(runtime_ + layout_.runtime_interpreters_head, interp)) return failure();
  for (size_t i = 0; interp != 0 && i < limits_.max_interpreters; ++i) {
    uint64_t holder = gil_holder(interp);
    uint64_t tstate = 0;
    if (!memory_.read_value(interp + layout_.interp_threads_head, tstate)) return failure();
    for (size_t n = 0; tstate != 0; ++n) {
      if (n >= limits_.max_threads) return WalkStatus::torn;  // a cycle: the list moved
      ThreadSample thread;
      if (WalkStatus st = walk_thread(tstate, thread); st != WalkStatus::ok) return st;
      thread.holds_gil = holder == tstate;
      out.push_back(std::move(thread));
      if (!memory_.read_value(tstate + layout_.tstate_next, tstate)) return failure();
    }
    if (!memory_.read_value(interp + layout_.interp_next, interp)) return failure();
  }
  return WalkStatus::ok;
}

// The PyThreadState holding the GIL of this interpreter, 0 when it is free or unreadable.
uint64_t FrameWalker::gil_holder(uint64_t interp) {
  uint64_t gil = runtime_;
  uint32_t holder_at = layout_.runtime_gil_last_holder;
  uint32_t locked_at = layout_.runtime_gil_locked;
  if (layout_.gil_per_interpreter) {
    if (!memory_.read_value(interp + layout_.interp_gil_pointer, gil) || gil == 0) return 0;
    holder_at = layout_.gil_last_holder;
    locked_at = layout_.gil_locked;
  }
  int32_t locked = 0;
  uint64_t holder = 0;
  if (!memory_.read_value(gil + locked_at, locked) || locked == 0) return 0;
  if (!memory_.read_value(gil + holder_at, holder)) return 0;
  return holder;
}

WalkStatus FrameWalker::walk_thread(uint64_t tstate, ThreadSample& out) {
  uint32_t size = std::max({layout_.tstate_next, layout_.tstate_frame, layout_.tstate_thread_id,
                            layout_.tstate_native_thread_id.value_or(0)}) +
                  8;
  std::string buf(size, '\0');
  if (memory_.read(tstate, buf.data(), buf.size()) != ReadStatus::ok) return failure();
  out.pthread_id = field<uint64_t>(buf, layout_.tstate_thread_id);
  if (layout_.tstate_native_thread_id) {
    out.native_tid = static_cast<int32_t>(field<uint64_t>(buf, *layout_.tstate_native_thread_id));
  }
  uint64_t frame = field<uint64_t>(buf, layout_.tstate_frame);
  if (layout_.frame_model == FrameModel::cframe && frame != 0) {
    if (!memory_.read_value(frame + layout_.cframe_current_frame, frame)) return failure();
  }
  return frame == 0 ? WalkStatus::ok : walk_frames(frame, out);
}

WalkStatus FrameWalker::walk_frames(uint64_t frame, ThreadSample& out) {
  std::vector<PyFrameInfo> leaf_first;
  std::string buf(layout_.iframe_size, '\0');
  for (size_t steps = 0; frame != 0 && leaf_first.size() < limits_.max_depth; ++steps) {
    if (steps > 2 * limits_.max_depth) return WalkStatus::torn;
    if (memory_.read(frame, buf.data(), buf.size()) != ReadStatus::ok) return failure();
    uint64_t code = 0, next = 0, offset = 0;
    bool offset_known = false;
    if (layout_.frame_model == FrameModel::frame_object) {
      code = field<uint64_t>(buf, layout_.frame_code);
      next = field<uint64_t>(buf, layout_.frame_back);
      int32_t lasti = field<int32_t>(buf, layout_.frame_lasti);
      offset_known = lasti >= 0;
      offset = layout_.minor == 10 ? uint64_t(lasti) * 2 : uint64_t(lasti);  // 3.10: code units
    } else {
      // 3.14+: f_executable is a _PyStackRef; its low bits tag the reference.
      code = field<uint64_t>(buf, layout_.iframe_code) & ~layout_.code_tag_mask;
      next = field<uint64_t>(buf, layout_.iframe_previous);
      if (field<uint8_t>(buf, layout_.iframe_owner) >= kFrameOwnedByCStack) {
        frame = next;  // an entry shim or base frame of the interpreter, not Python code
        continue;
      }
      uint64_t instr = field<uint64_t>(buf, layout_.iframe_instr);
      uint64_t first = code + layout_.code_code_adaptive;
      offset_known = instr >= first && instr - first < (1u << 24);
      offset = instr - first;
    }
    PyFrameInfo info;
    if (WalkStatus st = frame_of_code(code, offset, offset_known, info); st != WalkStatus::ok) {
      return st;
    }
    leaf_first.push_back(std::move(info));
    frame = next;
  }
  out.frames.assign(std::make_move_iterator(leaf_first.rbegin()),
                    std::make_move_iterator(leaf_first.rend()));
  return WalkStatus::ok;
}

WalkStatus FrameWalker::frame_of_code(uint64_t code, uint64_t offset, bool offset_known,
                                      PyFrameInfo& out) {
  WalkStatus status = WalkStatus::ok;
  const CodeInfo* ci = code_info(code, status);
  if (ci == nullptr) return status;
  out = ci->frame;
  out.line = offset_known ? line_for_offset(line_table_format(layout_.minor), ci->line_table,
                                            ci->frame.first_line, static_cast<uint32_t>(offset))
                          : ci->frame.first_line;
  return WalkStatus::ok;
}

const FrameWalker::CodeInfo* FrameWalker::code_info(uint64_t code, WalkStatus& status) {
  std::string head(layout_.code_size, '\0');
  if (code == 0 || memory_.read(code, head.data(), head.size()) != ReadStatus::ok) {
    status = code == 0 ? WalkStatus::torn : failure();
    return nullptr;
  }
  // ob_type right after ob_refcnt: a frame whose "code" is not a code object was torn.
  if (code_type_ != 0 && field<uint64_t>(head, 8) != code_type_) {
    status = WalkStatus::torn;
    return nullptr;
  }
  uint64_t name = field<uint64_t>(head, layout_.code_qualname.value_or(layout_.code_name));
  uint64_t file = field<uint64_t>(head, layout_.code_filename);
  uint64_t table = field<uint64_t>(head, layout_.code_linetable);
  int32_t first_line = field<int32_t>(head, layout_.code_firstlineno);
  std::string key(28, '\0');
  std::memcpy(key.data(), &name, 8);
  std::memcpy(key.data() + 8, &file, 8);
  std::memcpy(key.data() + 16, &table, 8);
  std::memcpy(key.data() + 24, &first_line, 4);
  auto it = code_cache_.find(code);
  if (it != code_cache_.end() && it->second.header == key) return &it->second;

  CodeInfo ci;
  ci.header = key;
  ci.frame.first_line = first_line > 0 ? static_cast<uint32_t>(first_line) : 0;
  if (!read_string(name, ci.frame.name) || !read_string(file, ci.frame.file)) {
    status = memory_.last_failure() == ReadStatus::gone ? WalkStatus::gone : WalkStatus::torn;
    return nullptr;
  }
  read_bytes_object(table, ci.line_table, kMaxLineTable);  // no table: lines fall back
  if (code_cache_.size() >= kMaxCachedCode) code_cache_.clear();
  return &(code_cache_[code] = std::move(ci));
}

// A compact str object (every code name and path is one) as UTF-8.
bool FrameWalker::read_string(uint64_t address, std::string& out) {
  std::string head(layout_.compact_data, '\0');
  if (address == 0 || memory_.read(address, head.data(), head.size()) != ReadStatus::ok) {
    return false;
  }
  uint32_t state = field<uint32_t>(head, layout_.unicode_state);
  int64_t length = field<int64_t>(head, layout_.unicode_length);
  uint32_t kind = (state >> 2) & 7;
  bool compact = ((state >> 5) & 1) != 0;
  bool ascii = ((state >> 6) & 1) != 0;
  if (!compact || (kind != 1 && kind != 2 && kind != 4) || length < 0) return false;
  size_t count = std::min<size_t>(static_cast<size_t>(length), limits_.max_string);
  std::string raw(count * kind, '\0');
  uint64_t data = address + (ascii ? layout_.ascii_data : layout_.compact_data);
  if (memory_.read(data, raw.data(), raw.size()) != ReadStatus::ok) return false;
  if (ascii) {
    out = std::move(raw);
    return true;
  }
  out.clear();
  for (size_t i = 0; i < count; ++i) {
    uint32_t cp = 0;
    if (kind == 1) cp = static_cast<unsigned char>(raw[i]);
    if (kind == 2) cp = field<uint16_t>(raw, static_cast<uint32_t>(i * 2));
    if (kind == 4) cp = field<uint32_t>(raw, static_cast<uint32_t>(i * 4));
    util::append_utf8(cp, out);
  }
  return true;
}

bool FrameWalker::read_bytes_object(uint64_t address, std::string& out, size_t limit) {
  int64_t size = 0;
  if (address == 0 || !memory_.read_value(address + layout_.bytes_size, size) || size < 0 ||
      static_cast<size_t>(size) > limit) {
    return false;
  }
  out.assign(static_cast<size_t>(size), '\0');
  return memory_.read(address + layout_.bytes_data, out.data(), out.size()) == ReadStatus::ok;
}

}  // namespace gp::runtime::python
