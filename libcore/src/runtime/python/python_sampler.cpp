// gp's CPython sampler for one process (see python_sampler.h).
#include "runtime/python/python_sampler.h"

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>

namespace gp::runtime::python {
namespace {

bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

std::set<int32_t> task_ids(pid_t pid) {
  std::set<int32_t> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (int32_t tid = std::atoi(e->d_name); tid > 0) out.insert(tid);
    }
    closedir(d);
  }
  return out;
}

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
  std::string head(kDebugOffsetsSize, '\0');
  ReadStatus read = memory.read(info->runtime_address, head.data(), head.size());
  if (read == ReadStatus::gone)
    return AttachFailure{AttachFailure::Kind::gone, "process went down during profiling"};
  if (read == ReadStatus::denied) {
    return AttachFailure{AttachFailure::Kind::denied,
                         "cannot read the process's memory: " + memory.last_error()};
  }
  std::optional<PyLayout> layout;
  if (info->version_known) layout = layout_for_minor(info->version.minor);
  if (!layout && read == ReadStatus::ok && head.starts_with("xdebugpy")) {
    auto from_debug = layout_from_debug_offsets(head);
    if (!from_debug)
      return AttachFailure{AttachFailure::Kind::unsupported, from_debug.error().message};
    layout = *from_debug;
    if (!info->version_known) info->version = {3, layout->minor, -1}, info->version_known = true;
  }
  if (!layout) {
    std::string v =
        info->version_known ? "CPython " + info->version.text() : "this CPython version";
    return AttachFailure{AttachFailure::Kind::unsupported,
                         v + " is not supported by gp's sampler (3.8 - 3.13)"};
  }
  return std::make_unique<PythonSampler>(pid, std::move(*info), *layout);
}

WalkStatus PythonSampler::sample(std::vector<ThreadSample>& out, int retries) {
  WalkStatus st = remote::sample_with_retries([&] { return walker_.sample(out); }, retries,
                                              memory_.pid(), stats_);
  if (st == WalkStatus::ok) fill_missing_tids(out);
  return st;
}

// Before 3.11 PyThreadState has only the pthread_t, which glibc makes the address of the
// thread's struct pthread; the kernel tid sits at a fixed offset in it (0x2d0 on x86-64
// glibc 2.2x-2.3x). Rather than trust one libc, the offset is found once: the first one where
// every thread's value is a distinct tid of /proc/PID/task.
void PythonSampler::fill_missing_tids(std::vector<ThreadSample>& threads) {
  if (threads.empty() || threads.front().native_tid != 0) return;
  if (tid_offset_ < 0 && tid_searches_ < 5) {
    ++tid_searches_;
    std::set<int32_t> tids = task_ids(memory_.pid());
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
        if (tids.count(v) == 0 || !seen.insert(v).second) break;
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

}  // namespace gp::runtime::python
