#pragma once
// Python frames in gp-record's native stacks (--python-frames). The BPF program walks the
// sampled thread's CPython frame chain and appends, after the native user frames, a marker and
// one (code object, instruction offset) entry per Python frame (bpf/profile.h, GP_PY_MARKER).
// Here, on the recording host:
// - split_python_frames() takes a user stack apart into its native frames and those entries;
// - splice_python_frames() puts each evaluation loop's Python frames next to the native frame of
//   that loop (_PyEval_EvalFrameDefault): leaf first, a loop's frames come just before it, so the
//   stack reads main;...;_PyEval_EvalFrameDefault;outer.py_func;...;inner_c_func;... root first;
// - PythonProcesses finds the interpreter of a process (version, offsets, the loop's address
//   range) and names code objects (qualified name, file, line), read from the live process on
//   first sight and cached per process, so the archive holds names and native frames stay
//   addresses for off-host symbolization.
// Nothing the BPF program read is taken on trust: a code object is named only when its type is
// PyCode_Type, and a stack whose loops and Python frames do not pair up keeps its native frames
// alone.

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gp/util/result.h"

namespace gp::record {

// The encoding of bpf/profile.h (GP_PY_*), which gp-record checks these against.
constexpr uint64_t kPyMarker = 0xfffe000000000000ULL;
constexpr uint64_t kPyMarkerMask = 0xffff000000000000ULL;
constexpr uint64_t kPyCut = 0x100, kPyReadFailed = 0x200;
constexpr uint64_t kPyFrame = 1ULL << 63, kPyEntry = 1ULL << 62;
constexpr unsigned kPyOffsetShift = 47;
constexpr uint64_t kPyOffsetUnknown = 0x7fff;
constexpr uint64_t kPyCodeMask = (1ULL << kPyOffsetShift) - 1;

// One Python frame as the BPF program recorded it.
struct PyFrameRef {
  uint64_t code = 0;    // PyCodeObject address in the process
  uint32_t offset = 0;  // instruction offset in code units (2 bytes)
  bool offset_known = false;
  bool entry = false;  // the outermost frame of its evaluation loop call
  bool operator==(const PyFrameRef&) const = default;
};

struct PyStackParts {
  size_t native = 0;               // the native frames: ips[0, native)
  std::vector<PyFrameRef> frames;  // leaf first; empty when the stack has no marker
  bool cut = false;                // the chain went on past what was recorded
  bool read_failed = false;        // a frame could not be read
};

// The native frames and the Python frames of a user stack as the BPF program stores it. A stack
// without a (well-formed) marker is all native.
PyStackParts split_python_frames(std::span<const uint64_t> ips);

// An address range [start, end).
struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;
};

// A frame of a spliced stack: native frame `index` of the user stack, or Python frame `index`.
struct SplicedFrame {
  bool python = false;
  size_t index = 0;
  bool operator==(const SplicedFrame&) const = default;
};

// Native and Python frames in one list, leaf first: the Python frames of the k-th evaluation loop
// frame (counted from the leaf; a native frame is one when its address, or for a return address
// the call before it, is in `eval`) just before that frame. nullopt when the loops and the
// groups of Python frames (each ending at an entry frame) are not as many.
std::optional<std::vector<SplicedFrame>> splice_python_frames(std::span<const uint64_t> native,
                                                              std::span<const PyFrameRef> frames,
                                                              std::span<const AddressRange> eval);
// The same for a stack's parts, whole chains only: a chain the walk cut (deeper than its bound,
// or a chain that loops) or stopped at an unreadable frame is refused, however its groups pair
// up with the loops.
std::optional<std::vector<SplicedFrame>> splice_python_frames(std::span<const uint64_t> native,
                                                              const PyStackParts& parts,
                                                              std::span<const AddressRange> eval);

// A Python frame named as gProfiler's PyPerf names it: "module.Class.method"
// (runtime/python/pyperf_name.h: the module from the file's path, one class), its file, lines,
// and gProfiler's package label of the file ("name==version", "standard-library==X.Y.Z", or "").
struct PyFrameName {
  std::string name;
  std::string file;
  uint32_t first_line = 0;
  uint32_t line = 0;  // 0 when unknown
  std::string package;
};

// What the BPF walk needs to know of one interpreter (bpf/profile.h: struct gp_python_proc).
struct PyWalkOffsets {
  uint64_t runtime = 0;
  uint64_t code_tag_mask = 0;
  bool frame_objects = false;  // 3.8 - 3.10
  uint32_t interpreters_head = 0, threads_head = 0, tstate_next = 0, tstate_thread_id = 0;
  uint32_t tstate_frame = 0;
  std::optional<uint32_t> cframe_frame;
  uint32_t frame_previous = 0, frame_code = 0, frame_instr = 0;
  std::optional<uint32_t> frame_owner, frame_is_entry;
  uint32_t code_adaptive = 0;
  bool lasti_bytes = false;
  uint32_t owner_shim = 0;
  uint32_t frame_read = 0;  // bytes from a frame's start that hold every field above
};

// The CPython processes whose frames are walked. Not thread-safe.
class PythonProcesses {
 public:
  // package_labels: frames carry their file's package label (gProfiler adds it unless
  // --no-python-versions).
  explicit PythonProcesses(bool package_labels = true);
  ~PythonProcesses();
  PythonProcesses(const PythonProcesses&) = delete;
  PythonProcesses& operator=(const PythonProcesses&) = delete;

  // Finds pid's interpreter; its offsets for the BPF walk, or why it is not walked ("no python
  // executable or libpython is mapped", an unsupported version, ...).
  Result<PyWalkOffsets> attach(pid_t pid);
  void forget(pid_t pid);
  // pid exited: its frames are named from what was named while it lived (its samples are
  // assembled after its exit), until it is attached again or more exited ones push it out.
  void exited(pid_t pid);
  // Names the Python frames of a stack of pid as the BPF program wrote it (user frames, leaf
  // first), so that they can be named after pid exits.
  void prename(pid_t pid, std::span<const uint64_t> ips);
  bool walked(pid_t pid) const;
  // The evaluation loop's range in pid; empty when unknown (or pid is not walked).
  std::span<const AddressRange> eval_ranges(pid_t pid) const;
  // Names a frame of pid: false when pid is not walked or the code object cannot be read (the
  // address holds no code object, or the process exited before it was named). A frame named
  // in this round (since the last next_round) is named as then, without reading its code
  // object again: a stack's frames named when it arrived, and frames repeated in a stack
  // (recursion), cost one read of the process's memory a round.
  bool name(pid_t pid, const PyFrameRef& frame, PyFrameName& out);
  // Starts a round: the frames named from now on are read from their processes again (the
  // recorder starts one at each drain of the samples).
  void next_round() { ++round_; }

 private:
  struct Process;
  std::vector<std::unique_ptr<Process>> processes_;
  std::deque<pid_t> exited_order_;  // exited processes still named, oldest first
  bool package_labels_;
  uint64_t round_ = 1;
  Process* find(pid_t pid) const;
};

}  // namespace gp::record
