// Adapter Profiles into archive tables: symbolic locations with frame kinds (driver.h).
#include "gp/runtime/driver.h"

namespace gp::runtime {

uint64_t add_profile(model::SessionBuilder& b, model::Process process, const Profile& profile) {
  const int32_t pid = process.pid;
  uint64_t total = 0;
  std::vector<uint64_t> leaf_first;
  for (const Stack& st : profile.stacks) {
    if (st.count == 0) continue;
    leaf_first.clear();
    for (auto it = st.frames.rbegin(); it != st.frames.rend(); ++it) {
      // gp-fold composes Python's "name (file:line)" from these fields; adapters give them raw.
      uint64_t fn = b.function(it->name, it->file, it->start_line, {}, it->package);
      leaf_first.push_back(b.symbolic_location(it->kind, fn, it->line));
    }
    const int32_t tid = st.tid != 0 ? st.tid : pid;
    if (!st.thread_name.empty()) b.thread(tid, pid, st.thread_name);
    b.add_sample(pid, tid, b.stack(leaf_first), st.count);
    total += st.count;
  }
  // Stacks win over an error the adapter also gave (a partial profile is still a profile); an
  // error alone becomes gProfiler's one-sample error stack: Process.error_frame and an empty
  // stack, folded as "<comm>;[Profiling error: ...] 1".
  process.error_frame = total > 0 ? std::string() : profile.error_frame;
  // gProfiler roots PHP stacks at the literal "php", not the process's comm (§5.6).
  if (process.runtime == "php") process.comm = "php";
  b.process(process);
  if (total == 0 && !profile.error_frame.empty()) b.add_sample(pid, pid, b.stack({}), 1);
  return total;
}

}  // namespace gp::runtime
