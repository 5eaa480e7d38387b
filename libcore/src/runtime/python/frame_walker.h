#pragma once
// FrameWalker: one snapshot of every Python thread's stack in a live CPython process, read
// with process_vm_readv while the target runs (no ptrace stop). The walk follows
// _PyRuntime -> interpreters -> threads -> current frame -> previous frames, with the offsets of
// a PyLayout. A snapshot can be torn (a thread moved while it was read); the walker detects
// what it can (failed reads, a frame's code that is not a PyCode object, chains that do not
// end) and reports `torn` so the caller retries or drops the sample.
//
// Code objects are cached by address and revalidated on every use from their header (name,
// file and first-line fields must be unchanged), so a steady stack costs two small reads per
// frame. Not thread-safe: one walker per sampling thread.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/python/python_layout.h"
#include "runtime/remote/remote_memory.h"

namespace gp::runtime::python {

using remote::ReadStatus;
using remote::RemoteMemory;

struct PyFrameInfo {
  std::string name;  // co_qualname (3.11+), else co_name
  std::string file;  // co_filename
  uint32_t first_line = 0;
  uint32_t line = 0;  // current line; 0 when unknown
};

struct ThreadSample {
  uint64_t pthread_id = 0;  // PyThreadState.thread_id
  int32_t native_tid = 0;   // kernel tid; 0 when unknown
  bool holds_gil = false;
  std::vector<PyFrameInfo> frames;  // root first
};

using remote::WalkStatus;

struct WalkLimits {
  size_t max_interpreters = 16;
  size_t max_threads = 4096;
  size_t max_depth = 1024;   // deeper stacks are cut at the root end
  size_t max_string = 4096;  // characters of a name or path
};

class FrameWalker {
 public:
  FrameWalker(RemoteMemory& memory, PyLayout layout, uint64_t runtime_address,
              uint64_t code_type_address, WalkLimits limits = {});

  // Fills `out` with one sample per thread (threads without a Python frame have none).
  WalkStatus sample(std::vector<ThreadSample>& out);
  size_t cached_code_objects() const { return code_cache_.size(); }
  // The function, file and line of code object `code` at instruction byte offset `offset`
  // (first line when !offset_known), as a frame of the walk names it; cached like the walk's.
  WalkStatus describe(uint64_t code, uint64_t offset, bool offset_known, PyFrameInfo& out) {
    return frame_of_code(code, offset, offset_known, out);
  }
  const PyLayout& layout() const { return layout_; }

 private:
  struct CodeInfo {
    std::string header;  // raw bytes of the fields the strings came from, for revalidation
    PyFrameInfo frame;   // line not set
    std::string line_table;
  };
  WalkStatus walk_thread(uint64_t tstate, ThreadSample& out);
  WalkStatus walk_frames(uint64_t frame, ThreadSample& out);
  WalkStatus frame_of_code(uint64_t code, uint64_t instr_byte_offset, bool offset_known,
                           PyFrameInfo& out);
  const CodeInfo* code_info(uint64_t code, WalkStatus& status);
  bool read_string(uint64_t address, std::string& out);
  bool read_bytes_object(uint64_t address, std::string& out, size_t limit);
  uint64_t gil_holder(uint64_t interp);
  WalkStatus failure() const;

  RemoteMemory& memory_;
  PyLayout layout_;
  uint64_t runtime_;
  uint64_t code_type_;
  WalkLimits limits_;
  std::unordered_map<uint64_t, CodeInfo> code_cache_;
};

}  // namespace gp::runtime::python
