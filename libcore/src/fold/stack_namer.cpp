#include "fold/stack_namer.h"

namespace gp::fold::detail {
namespace {

using model::FrameKind;

// perf prints a bracketed DSO without its brackets: "[vdso]" → "(vdso)".
std::string dso_frame(const std::string& path) {
  if (path.size() >= 2 && path.front() == '[' && path.back() == ']')
    return "(" + path.substr(1, path.size() - 2) + ")";
  return "(" + path + ")";
}

bool kernel_mapping(const model::Mapping& m) {
  return m.kind == model::MappingKind::kernel || m.kind == model::MappingKind::module;
}

// py-spy's "-F" format as gProfiler runs it: "name (path/file.py:first line)".
std::string python_name(const model::Function& f, const model::Line& line) {
  uint32_t at = f.start_line != 0 ? f.start_line : line.line;
  std::string name = f.name.empty() ? f.system_name : f.name;
  if (at == 0) return name + " (" + f.file_name + ")";
  return name + " (" + f.file_name + ":" + std::to_string(at) + ")";
}

}  // namespace

void StackNamer::name_location(uint64_t id, NamedLocation& named) const {
  std::vector<Frame>& out = named.frames;
  if (id == 0 || id > s_.locations.size()) {
    out.push_back({"[unknown]", FrameKind::unknown});
    return;
  }
  const model::Location& loc = s_.location(id);
  const model::Mapping* m = nullptr;
  if (loc.mapping_id != 0 && loc.mapping_id <= s_.mappings.size()) m = &s_.mapping(loc.mapping_id);
  FrameKind base = loc.kind;
  if (base == FrameKind::unknown && m != nullptr)
    base = kernel_mapping(*m) ? FrameKind::kernel : FrameKind::native;
  bool kernel = base == FrameKind::kernel || (m != nullptr && kernel_mapping(*m));
  named.kernel = kernel;
  if (loc.lines.empty()) {
    // Unsymbolized: perf's spelling ("(dso)" for a known user DSO, else "[unknown]").
    if (kernel) out.push_back({"[unknown]", FrameKind::kernel});
    else if (m != nullptr && !m->path.empty()) out.push_back({dso_frame(m->path), base});
    else out.push_back({"[unknown]", base});
    return;
  }
  for (const model::Line& line : loc.lines) {
    if (line.function_id == 0 || line.function_id > s_.functions.size()) {
      out.push_back({"[unknown]", base});
      continue;
    }
    const model::Function& f = s_.function(line.function_id);
    FrameKind kind = line.inlined ? FrameKind::inlined : base;
    if (base == FrameKind::python && !f.file_name.empty()) {
      out.push_back({python_name(f, line), kind});
      continue;
    }
    const std::string& name = f.name.empty() ? f.system_name : f.name;
    out.push_back({name.empty() ? std::string("[unknown]") : name, kind});
  }
}

const NamedLocation& StackNamer::location(uint64_t id) {
  static const NamedLocation kInvalid{{{"[unknown]", FrameKind::unknown}}, false, true};
  if (id >= locations_.size()) return kInvalid;
  NamedLocation& nl = locations_[id];
  if (!nl.named) {
    name_location(id, nl);
    nl.named = true;
  }
  return nl;
}

ProcessTable::ProcessTable(const model::Session& s) : s_(s) {
  for (size_t i = 0; i < s.processes.size(); ++i) newest_[s.processes[i].pid] = i;
  for (size_t i = 0; i < s.threads.size(); ++i) thread_[s.threads[i].tid] = i;
}

const model::Process* ProcessTable::find(int32_t pid) const {
  auto it = newest_.find(pid);
  return it == newest_.end() ? nullptr : &s_.processes[it->second];
}

std::string ProcessTable::comm(int32_t pid, int32_t tid) const {
  if (const model::Process* p = find(pid); p != nullptr && !p->comm.empty()) return p->comm;
  if (auto it = thread_.find(tid); it != thread_.end() && !s_.threads[it->second].comm.empty())
    return s_.threads[it->second].comm;
  if (pid == 0) return "swapper";
  return "[pid " + std::to_string(pid) + "]";
}

std::string process_frame_name(const ProcessTable& t, int32_t pid, int32_t tid, bool with_pid,
                               bool with_tid) {
  std::string name = t.comm(pid, tid);
  if (with_tid) return name + "-" + std::to_string(pid) + "/" + std::to_string(tid);
  if (with_pid) return name + "-" + std::to_string(pid);
  return name;
}

}  // namespace gp::fold::detail
