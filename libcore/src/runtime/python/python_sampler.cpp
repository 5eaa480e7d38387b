// gp's CPython sampler for one process (see python_sampler.h).
#include "runtime/python/python_sampler.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>

#include "runtime/remote/sampling_clock.h"

namespace gp::runtime::python {
namespace {

bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

AttachFailure locate_failure(pid_t pid, const std::string& message) {
  if (!process_alive(pid) || message == "process exited") {
    return {AttachFailure::Kind::gone, "process went down during profiling"};
  }
  return {AttachFailure::Kind::not_python, message};
}

}  // namespace

PythonSampler::PythonSampler(pid_t pid, InterpreterInfo info, PyLayout layout)
    : memory_(pid),
      info_(std::move(info)),
      walker_(memory_, layout, info_.runtime_address, info_.code_type_address) {}

std::variant<std::unique_ptr<PythonSampler>, AttachFailure> PythonSampler::attach(
    pid_t pid, const std::string& proc_root) {
  RemoteMemory memory(pid);
  auto info = locate_interpreter(pid, memory, proc_root);
  if (!info) return locate_failure(pid, info.error().message);
  std::string head(kDebugOffsetsReadSize, '\0');
  ReadStatus read = memory.read(info->runtime_address, head.data(), head.size());
  if (read == ReadStatus::gone)
    return AttachFailure{AttachFailure::Kind::gone, "process went down during profiling"};
  if (read == ReadStatus::denied) {
    return AttachFailure{AttachFailure::Kind::denied,
                         "cannot read the process's memory: " + memory.last_error()};
  }
  bool published = read == ReadStatus::ok && head.starts_with(kDebugOffsetsCookie);
  auto layout = published ? published_layout(*info, head) : table_layout(*info);
  if (auto* failure = std::get_if<AttachFailure>(&layout)) return std::move(*failure);
  return std::make_unique<PythonSampler>(pid, std::move(*info), std::get<PyLayout>(layout));
}

// 3.13+: walked by the offsets the interpreter publishes, whatever gp's table says; its version
// must agree with Py_Version's (a binary that says two things is not walked).
std::variant<PyLayout, AttachFailure> PythonSampler::published_layout(InterpreterInfo& info,
                                                                      std::string_view head) {
  auto offsets = parse_debug_offsets(head);
  if (!offsets) return AttachFailure{AttachFailure::Kind::unsupported, offsets.error().message};
  const PythonVersion& v = offsets->version;
  if (info.version_known && info.version.micro >= 0 &&
      (info.version.minor != v.minor || info.version.micro != v.micro)) {
    return AttachFailure{AttachFailure::Kind::unsupported,
                         "the interpreter's versions disagree (Py_Version " + info.version.text() +
                             ", _Py_DebugOffsets " + v.text() + "): not walked"};
  }
  info.version = v;
  info.version_known = true;
  PyLayout layout = layout_from_debug_offsets(*offsets);
  if (auto table = layout_for_minor(v.minor)) {
    if (std::string diff = layout_differences(layout, *table); !diff.empty()) {
      info.layout_note = "CPython " + v.text() + " publishes offsets that differ from gp's 3." +
                         std::to_string(v.minor) + " table (" + diff +
                         "): walked by the published offsets";
    }
  }
  return layout;
}

// 3.8 - 3.12 publish no offsets: gp's table of the version, when it has one.
std::variant<PyLayout, AttachFailure> PythonSampler::table_layout(const InterpreterInfo& info) {
  std::string v = info.version_known ? "CPython " + info.version.text() : "this CPython version";
  if (info.version_known && info.version.minor >= 13) {
    return AttachFailure{AttachFailure::Kind::unsupported,
                         v + " publishes no _Py_DebugOffsets at _PyRuntime: not walked by guess"};
  }
  std::optional<PyLayout> layout;
  if (info.version_known) layout = layout_for_minor(info.version.minor);
  if (!layout) {
    return AttachFailure{AttachFailure::Kind::unsupported,
                         v + " is not supported by gp's sampler (3.8 - 3.15)"};
  }
  return *layout;
}

WalkStatus PythonSampler::sample(std::vector<ThreadSample>& out, int retries) {
  WalkStatus st = remote::sample_with_retries([&] { return walker_.sample(out); }, retries,
                                              memory_.pid(), stats_);
  if (st == WalkStatus::ok) {
    fill_missing_tids(out);
    to_own_namespace_tids(out);
  }
  return st;
}

// Before 3.11 PyThreadState has only the pthread_t, which glibc makes the address of the
// thread's struct pthread; the kernel tid sits at a fixed offset in it (0x2d0 on x86-64
// glibc 2.2x-2.3x). Rather than trust one libc (a container brings its own), the offset is found
// once: the first one where every thread's value is a distinct tid of the process, as its own
// pid namespace numbers them.
void PythonSampler::fill_missing_tids(std::vector<ThreadSample>& threads) {
  if (threads.empty() || threads.front().native_tid != 0) return;
  if (tid_offset_ < 0 && tid_searches_ < 5) {
    ++tid_searches_;
    tids_ = remote::namespace_tids(memory_.pid());
    std::vector<std::string> blocks;
    for (const auto& t : threads) {
      std::string block(2048, '\0');
      if (memory_.read(t.pthread_id, block.data(), block.size()) != ReadStatus::ok) return;
      blocks.push_back(std::move(block));
    }
    for (int off = 0; off + 4 <= 2048 && tid_offset_ < 0; off += 4) {
      std::set<int32_t> seen;
      for (const auto& b : blocks) {
        int32_t v = 0;
        std::copy_n(b.data() + off, 4, reinterpret_cast<char*>(&v));
        if (tids_.count(v) == 0 || !seen.insert(v).second) break;
      }
      if (seen.size() == blocks.size()) tid_offset_ = off;
    }
  }
  if (tid_offset_ < 0) return;
  for (auto& t : threads) {
    int32_t tid = 0;
    if (memory_.read_value(t.pthread_id + static_cast<uint64_t>(tid_offset_), tid))
      t.native_tid = tid;
  }
}

// The interpreter records tids as its own pid namespace numbers them (gettid() in a container);
// samples carry gp's. The map is reread when a thread is new to it; a tid it still lacks is
// dropped (0 = unknown) rather than shown as some other thread's.
void PythonSampler::to_own_namespace_tids(std::vector<ThreadSample>& threads) {
  bool reread = false;
  for (auto& t : threads) {
    if (t.native_tid == 0) continue;
    auto it = tids_.find(t.native_tid);
    if (it == tids_.end() && !reread) {
      tids_ = remote::namespace_tids(memory_.pid());
      reread = true;
      it = tids_.find(t.native_tid);
    }
    t.native_tid = it == tids_.end() ? 0 : it->second;
  }
}

}  // namespace gp::runtime::python
