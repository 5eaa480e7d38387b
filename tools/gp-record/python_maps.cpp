// The CPython processes the BPF program walks (see python_maps.h).
#include "python_maps.h"

#include <bpf/bpf.h>

#include <cstring>

#include "gp/cli/tool.h"
#include "profile.h"

namespace gp::record_tool {
namespace {

static_assert(sizeof(gp_python_proc) == 80, "bpf/profile.h: struct gp_python_proc");
// libcore decodes what the program writes: the two spell the encoding alike.
static_assert(record::kPyMarker == GP_PY_MARKER && record::kPyMarkerMask == GP_PY_MARKER_MASK);
static_assert(record::kPyCut == GP_PY_CUT && record::kPyReadFailed == GP_PY_READ_FAILED);
static_assert(record::kPyFrame == GP_PY_FRAME && record::kPyEntry == GP_PY_ENTRY);
static_assert(record::kPyOffsetShift == GP_PY_OFFSET_SHIFT &&
              record::kPyOffsetUnknown == GP_PY_OFFSET_UNKNOWN &&
              record::kPyCodeMask == GP_PY_CODE_MASK);

gp_python_proc to_bpf(const record::PyWalkOffsets& o) {
  gp_python_proc p;
  std::memset(&p, 0, sizeof(p));
  p.runtime = o.runtime;
  p.code_tag_mask = o.code_tag_mask;
  p.model = o.frame_objects ? GP_PY_FRAME_OBJECT : GP_PY_INTERPRETER_FRAME;
  p.interpreters_head = o.interpreters_head;
  p.threads_head = o.threads_head;
  p.tstate_next = o.tstate_next;
  p.tstate_thread_id = o.tstate_thread_id;
  p.tstate_frame = o.tstate_frame;
  p.cframe_frame = o.cframe_frame.value_or(GP_PY_NONE);
  p.frame_previous = o.frame_previous;
  p.frame_code = o.frame_code;
  p.frame_instr = o.frame_instr;
  p.frame_owner = o.frame_owner.value_or(GP_PY_NONE);
  p.frame_is_entry = o.frame_is_entry.value_or(GP_PY_NONE);
  p.code_adaptive = o.code_adaptive;
  p.lasti_bytes = o.lasti_bytes ? 1 : 0;
  p.owner_shim = o.owner_shim;
  p.frame_read = o.frame_read;
  return p;
}

}  // namespace

void PythonMaps::announced(int32_t pid) {
  const bool known = processes_.walked(pid);  // announced again (or given with --pid)
  auto offsets = processes_.attach(pid);
  if (!offsets) {
    gone(pid);
    // Most processes are not Python: only a refusal of one that maps an interpreter is news.
    const std::string& why = offsets.error().message;
    // A refusal is counted once per process; one that went down meanwhile is no refusal.
    const bool gone_meanwhile = why.find("went down") != std::string::npos;
    if (why.find("no python executable") == std::string::npos &&
        (gone_meanwhile || refused_.insert(pid).second))
      gp::cli::info(1, "python frames: pid " + std::to_string(pid) + " not walked: " + why);
    return;
  }
  const gp_python_proc entry = to_bpf(*offsets);
  uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_update_elem(bpf_map__fd(procs_), &key, &entry, BPF_ANY) != 0) {
    processes_.forget(pid);
    gp::cli::info(1, "python frames: pid " + std::to_string(pid) + " not walked: map full");
    return;
  }
  if (!known) ++walked_processes_;
}

void PythonMaps::gone(int32_t pid, bool exited) {
  uint32_t key = static_cast<uint32_t>(pid);
  bpf_map_delete_elem(bpf_map__fd(procs_), &key);
  if (exited) processes_.exited(pid);
  else processes_.forget(pid);
}

std::vector<model::Counter> PythonMaps::counters() const {
  int ncpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpus > 0 ? ncpus : 1) * GP_PY_COUNTER_MAX);
  uint64_t totals[GP_PY_COUNTER_MAX] = {};
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(stats_), &zero, per_cpu.data()) == 0)
    for (size_t i = 0; i < per_cpu.size(); ++i) totals[i % GP_PY_COUNTER_MAX] += per_cpu[i];
  auto c = [](const char* name, uint64_t v) {
    return model::Counter{name, static_cast<int64_t>(v)};
  };
  return {c("python.processes", walked_processes_),
          c("python.processes.refused", refused_.size()),
          c("python.samples", totals[GP_PY_SAMPLES]),
          c("python.walked", totals[GP_PY_WALKED]),
          c("python.no_thread", totals[GP_PY_NO_THREAD]),
          c("python.no_frame", totals[GP_PY_NO_FRAME]),
          c("python.no_room", totals[GP_PY_NO_ROOM]),
          c("python.cut", totals[GP_PY_CUT_CHAINS]),
          c("python.read_errors", totals[GP_PY_READ_ERRORS])};
}

}  // namespace gp::record_tool
