#pragma once
// Naming frames and processes of one session (internal to libcore/src/fold): the single place
// that decides how a location, an unsymbolized address or a process is spelled in every text
// format. Names follow gProfiler/perf (reference/gprofiler.md §2.5, §3.4).

#include <cstdint>
#include <map>
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
  // insert_dso_name: symbolized native frames are "name (dso)", as gProfiler's
  // --insert-dso-name spells perf's frames.
  explicit StackNamer(const model::Session& s, bool insert_dso_name = false)
      : s_(s), insert_dso_name_(insert_dso_name), dso_names_(s.mappings.size() + 1) {}

  // The frames of location `id` (cached); an invalid id gives "[unknown]".
  const NamedLocation& location(uint64_t id);

  // The same frames without copies: calls emit(std::string_view name, FrameKind kind) for
  // each, outermost first. Returns whether the location is a kernel one. A name stays valid as
  // long as the namer and the session, and one view (data pointer and size) always spells the
  // same name, so callers may cache on the pointer instead of hashing the text.
  template <typename Emit>
  bool for_each_frame(uint64_t id, Emit&& emit);

 private:
  const model::Mapping* mapping_of(const model::Location& loc) const;
  const std::string& dso_name(uint64_t mapping_id);
  const std::string& python_name(uint64_t function_id, const model::Line& line);
  const std::string& name_with_dso(const std::string& name, uint64_t function_id,
                                   uint64_t mapping_id);

  const model::Session& s_;
  bool insert_dso_name_;
  std::vector<NamedLocation> locations_;  // sized on first use: for_each_frame needs none
  // Composed names, kept for the namer's lifetime (see for_each_frame).
  std::vector<std::string> dso_names_;                      // by mapping id; "" = not yet
  std::unordered_map<uint64_t, std::string> python_names_;  // (function id, line) → name
  std::map<std::pair<uint64_t, uint64_t>, std::string> dso_symbols_;  // (function, mapping)
};

// Composed names, written into out (replacing its content).
void dso_frame_name(const std::string& path, std::string& out);
void python_frame_name(const model::Function& f, const model::Line& line, std::string& out);
// gProfiler's --insert-dso-name spelling of a symbolized native frame: "name (dso)".
void dso_symbol_frame_name(const std::string& name, const std::string& path, std::string& out);
bool is_kernel_mapping(const model::Mapping& m);

template <typename Emit>
bool StackNamer::for_each_frame(uint64_t id, Emit&& emit) {
  using model::FrameKind;
  if (id == 0 || id > s_.locations.size()) {
    emit(std::string_view("[unknown]"), FrameKind::unknown);
    return false;
  }
  const model::Location& loc = s_.location(id);
  const model::Mapping* m = mapping_of(loc);
  FrameKind base = loc.kind;
  if (base == FrameKind::unknown && m != nullptr)
    base = is_kernel_mapping(*m) ? FrameKind::kernel : FrameKind::native;
  bool kernel = base == FrameKind::kernel || (m != nullptr && is_kernel_mapping(*m));
  if (loc.lines.empty()) {
    // Unsymbolized: perf's spelling ("(dso)" for a known user DSO, else "[unknown]").
    if (kernel) {
      emit(std::string_view("[unknown]"), FrameKind::kernel);
    } else if (m != nullptr && !m->path.empty()) {
      emit(std::string_view(dso_name(loc.mapping_id)), base);
    } else {
      emit(std::string_view("[unknown]"), base);
    }
    return kernel;
  }
  for (const model::Line& line : loc.lines) {
    if (line.function_id == 0 || line.function_id > s_.functions.size()) {
      emit(std::string_view("[unknown]"), base);
      continue;
    }
    const model::Function& f = s_.function(line.function_id);
    FrameKind kind = line.inlined ? FrameKind::inlined : base;
    if (base == FrameKind::python && !f.file_name.empty()) {
      emit(std::string_view(python_name(line.function_id, line)), kind);
      continue;
    }
    const std::string& name = f.name.empty() ? f.system_name : f.name;
    if (name.empty()) {
      emit(std::string_view("[unknown]"), kind);
    } else if (insert_dso_name_ && base == FrameKind::native && m != nullptr && !kernel &&
               !m->path.empty()) {
      emit(std::string_view(name_with_dso(name, line.function_id, loc.mapping_id)), kind);
    } else {
      emit(std::string_view(name), kind);
    }
  }
  return kernel;
}

// Process-level names and fields for samples of one session.
class ProcessTable {
 public:
  explicit ProcessTable(const model::Session& s);

  // The newest Process entry for pid, or nullptr.
  const model::Process* find(int32_t pid) const;
  // Process comm, else the thread's comm, else "swapper" for pid 0, else "[pid N]".
  std::string comm(int32_t pid, int32_t tid) const;
  // The comm a sample was taken under when it says, else comm(pid, tid).
  std::string comm(const model::Sample& smp) const {
    return smp.comm.empty() ? comm(smp.pid, smp.tid) : smp.comm;
  }

 private:
  const model::Session& s_;
  std::unordered_map<int32_t, size_t> newest_;
  std::unordered_map<int32_t, size_t> thread_;
};

// The process frame text: "comm", "comm-PID" or "comm-PID/TID".
std::string process_frame_name(const ProcessTable& t, const model::Sample& smp, bool with_pid,
                               bool with_tid);

}  // namespace gp::fold::detail
