// FrameWalker on hand-built CPython 3.14 structs in this process's own memory (read back through
// process_vm_readv like any target), laid out by the offsets Debian's python3.14 publishes: a
// tagged f_executable (_PyStackRef) is walked to its code object, the interpreter's own frames
// are skipped, and corrupted frames (a "code" that is no code object, a chain into unmapped
// memory) make the snapshot torn, never a frame shown as true.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "runtime/python/frame_walker.h"
#include "runtime_python_dumped_offsets.h"

namespace gp::runtime::python {
namespace {

PyLayout layout_314() {
  auto d = parse_debug_offsets(test::dumped_debug_offsets("3.14"));
  EXPECT_TRUE(d.ok());
  return layout_from_debug_offsets(*d);
}

// One zeroed, 16-byte aligned block per struct; addresses are this process's.
class FakeInterpreter {
 public:
  FakeInterpreter() : layout_(layout_314()) {
    runtime_ = block(1024);
    interp_ = block(8192);
    tstate_ = block(256);
    code_type_ = block(64);
    set(runtime_, layout_.runtime_interpreters_head, interp_);
    set(interp_, layout_.interp_threads_head, tstate_);
    set(tstate_, *layout_.tstate_native_thread_id, 4242);
  }
  uint64_t str(const std::string& text) {
    uint64_t s = block(layout_.ascii_data + text.size() + 1);
    set(s, layout_.unicode_length, text.size());
    set32(s, layout_.unicode_state, (1u << 2) | (1u << 5) | (1u << 6));  // kind 1, compact, ascii
    std::memcpy(ptr(s + layout_.ascii_data), text.data(), text.size());
    return s;
  }
  uint64_t code(const std::string& name, const std::string& file, uint32_t first_line) {
    uint64_t c = block(256);
    set(c, 8, code_type_);
    set(c, *layout_.code_qualname, str(name));
    set(c, layout_.code_name, str(name));
    set(c, layout_.code_filename, str(file));
    set32(c, layout_.code_firstlineno, first_line);
    return c;
  }
  // A frame running `executable` (a tagged reference when tag != 0), owned by `owner`.
  uint64_t frame(uint64_t executable, uint64_t previous, uint8_t owner = 0) {
    uint64_t f = block(128);
    set(f, layout_.iframe_code, executable);
    set(f, layout_.iframe_previous, previous);
    *ptr(f + layout_.iframe_owner) = static_cast<char>(owner);
    return f;
  }
  void run(uint64_t leaf) { set(tstate_, layout_.tstate_frame, leaf); }
  WalkStatus sample(std::vector<ThreadSample>& out) {
    remote::RemoteMemory memory(getpid());
    FrameWalker walker(memory, layout_, runtime_, code_type_);
    return walker.sample(out);
  }

 private:
  uint64_t block(size_t size) {
    blocks_.emplace_back((size + 15) / 16 + 1);
    return reinterpret_cast<uint64_t>(blocks_.back().data());
  }
  static char* ptr(uint64_t address) { return reinterpret_cast<char*>(address); }
  static void set(uint64_t base, uint64_t offset, uint64_t value) {
    std::memcpy(ptr(base + offset), &value, 8);
  }
  static void set32(uint64_t base, uint64_t offset, uint32_t value) {
    std::memcpy(ptr(base + offset), &value, 4);
  }
  struct alignas(16) Chunk {
    char bytes[16];
  };
  PyLayout layout_;
  std::vector<std::vector<Chunk>> blocks_;  // outer vector: the blocks never move
  uint64_t runtime_ = 0, interp_ = 0, tstate_ = 0, code_type_ = 0;
};

TEST(RuntimePythonFrameWalker, TaggedExecutablesAndInterpreterFramesOf314) {
  FakeInterpreter py;
  uint64_t outer = py.frame(py.code("main", "/app/main.py", 3), 0);
  // The interpreter's own base frame between them (FRAME_OWNED_BY_INTERPRETER, 3.14: 3) and a
  // C-stack shim (FRAME_OWNED_BY_CSTACK, 3.14: 4): not Python code.
  uint64_t shim = py.frame(0, py.frame(0, outer, 3), 4);
  // f_executable as a deferred _PyStackRef: the code object's address with tag bit 1.
  uint64_t leaf = py.frame(py.code("Worker.run", "/app/work.py", 10) | 1, shim);
  py.run(leaf);
  std::vector<ThreadSample> threads;
  ASSERT_EQ(py.sample(threads), WalkStatus::ok);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].native_tid, 4242);
  ASSERT_EQ(threads[0].frames.size(), 2u);
  EXPECT_EQ(threads[0].frames[0].name, "main");
  EXPECT_EQ(threads[0].frames[0].file, "/app/main.py");
  EXPECT_EQ(threads[0].frames[1].name, "Worker.run");
  EXPECT_EQ(threads[0].frames[1].first_line, 10u);
}

TEST(RuntimePythonFrameWalker, CorruptedFramesAreTornNotShown) {
  FakeInterpreter py;
  uint64_t outer = py.frame(py.code("main", "/app/main.py", 3), 0);
  // A frame whose executable is a str, not a code object.
  py.run(py.frame(py.str("not code"), outer));
  std::vector<ThreadSample> threads;
  EXPECT_EQ(py.sample(threads), WalkStatus::torn);
  // A frame whose previous frame lies in unmapped memory.
  py.run(py.frame(py.code("main", "/app/main.py", 3), 0x10));
  EXPECT_EQ(py.sample(threads), WalkStatus::torn);
  // A null executable in a Python-owned frame.
  py.run(py.frame(0, outer));
  EXPECT_EQ(py.sample(threads), WalkStatus::torn);
}

}  // namespace
}  // namespace gp::runtime::python
