#pragma once
// PythonMaps (--python-frames): the CPython processes whose frames the BPF program walks. A
// process announced by the sampler is looked at once (is it CPython, of a version gp knows?);
// its interpreter's offsets go into the program's `python_procs` map, and gp's record library
// names the frames the program records (gp/record/python_frames.h), as their stacks arrive, while
// the process lives. An exec or an exit takes the process out again (a new image is looked at
// when it is announced).

#include <bpf/libbpf.h>

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "gp/model/session.h"
#include "gp/record/python_frames.h"

namespace gp::record_tool {

class PythonMaps {
 public:
  // procs: the program's python_procs map; stats: its python_stats per-CPU array; versions:
  // frames carry their file's package label.
  PythonMaps(bpf_map* procs, bpf_map* stats, bool versions)
      : procs_(procs), stats_(stats), processes_(versions) {}

  // A new process (or one announced again): walked from now on when it is CPython.
  void announced(int32_t pid);
  // An exec or an exit: no longer walked (until announced again). After an exit, the frames
  // named while it lived still name its last samples.
  void gone(int32_t pid, bool exited = false);
  record::PythonProcesses& processes() { return processes_; }
  // "python.samples", ... named as in the archive.
  std::vector<model::Counter> counters() const;

 private:
  bpf_map* procs_;
  bpf_map* stats_;
  record::PythonProcesses processes_;
  uint64_t walked_processes_ = 0;
  // Processes that map an interpreter gp cannot walk (a version or layout it does not know).
  std::unordered_set<int32_t> refused_;
};

}  // namespace gp::record_tool
