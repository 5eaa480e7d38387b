#pragma once
// Naming frames and processes of one session (internal to libcore/src/fold): the single place
// that decides how a location, an unsymbolized address or a process is spelled in every text
// format. Names follow gProfiler/perf (reference/gprofiler.md §2.5, §3.4).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/fold/stacks.h"
#include "gp/model/session.h"

namespace gp::fold::detail {

// The frames of one location, outermost first (an inline chain gives several).
struct NamedLocation {
  std::vector<Frame> frames;
  bool kernel = false;
  bool named = false;
};

class StackNamer {
 public:
  explicit StackNamer(const model::Session& s) : s_(s), locations_(s.locations.size() + 1) {}

  // The frames of location `id` (cached); an invalid id gives "[unknown]".
  const NamedLocation& location(uint64_t id);

 private:
  void name_location(uint64_t location_id, NamedLocation& out) const;

  const model::Session& s_;
  std::vector<NamedLocation> locations_;
};

// Process-level names and fields for samples of one session.
class ProcessTable {
 public:
  explicit ProcessTable(const model::Session& s);

  // The newest Process entry for pid, or nullptr.
  const model::Process* find(int32_t pid) const;
  // Process comm, else the thread's comm, else "swapper" for pid 0, else "[pid N]".
  std::string comm(int32_t pid, int32_t tid) const;

 private:
  const model::Session& s_;
  std::unordered_map<int32_t, size_t> newest_;
  std::unordered_map<int32_t, size_t> thread_;
};

// The process frame text: "comm", "comm-PID" or "comm-PID/TID".
std::string process_frame_name(const ProcessTable& t, int32_t pid, int32_t tid, bool with_pid,
                               bool with_tid);

}  // namespace gp::fold::detail
