#include "fold/stack_namer.h"

namespace gp::fold::detail {

// perf prints a bracketed DSO without its brackets: "[vdso]" → "(vdso)".
void dso_frame_name(const std::string& path, std::string& out) {
  out.assign(1, '(');
  if (path.size() >= 2 && path.front() == '[' && path.back() == ']')
    out.append(path, 1, path.size() - 2);
  else out.append(path);
  out += ')';
}

void dso_symbol_frame_name(const std::string& name, const std::string& path, std::string& out) {
  std::string dso;
  dso_frame_name(path, dso);
  out = name;
  out += ' ';
  out += dso;
}

bool is_kernel_mapping(const model::Mapping& m) {
  return m.kind == model::MappingKind::kernel || m.kind == model::MappingKind::module;
}

// py-spy's "-F" format as gProfiler runs it: "name (path/file.py:first line)", with the
// package gProfiler adds after the line when known: "name (path/file.py:12 [pkg==1.0])".
void python_frame_name(const model::Function& f, const model::Line& line, std::string& out) {
  uint32_t at = f.start_line != 0 ? f.start_line : line.line;
  out = f.name.empty() ? f.system_name : f.name;
  out += " (";
  out += f.file_name;
  if (at != 0) {
    out += ':';
    out += std::to_string(at);
    if (!f.package.empty()) {
      out += " [";
      out += f.package;
      out += ']';
    }
  }
  out += ')';
}

const model::Mapping* StackNamer::mapping_of(const model::Location& loc) const {
  if (loc.mapping_id != 0 && loc.mapping_id <= s_.mappings.size())
    return &s_.mapping(loc.mapping_id);
  return nullptr;
}

const std::string& StackNamer::dso_name(uint64_t mapping_id) {
  std::string& name = dso_names_[mapping_id];  // mapping_of checked the id
  if (name.empty()) dso_frame_name(s_.mapping(mapping_id).path, name);
  return name;
}

const std::string& StackNamer::python_name(uint64_t function_id, const model::Line& line) {
  const model::Function& f = s_.function(function_id);
  // The name shows the function's first line when known, else the sample's line.
  uint32_t at = f.start_line != 0 ? f.start_line : line.line;
  auto [it, inserted] = python_names_.try_emplace((function_id << 32) | at);
  if (inserted) python_frame_name(f, line, it->second);
  return it->second;
}

const std::string& StackNamer::name_with_dso(const std::string& name, uint64_t function_id,
                                             uint64_t mapping_id) {
  auto [it, inserted] = dso_symbols_.try_emplace({function_id, mapping_id});
  if (inserted) dso_symbol_frame_name(name, s_.mapping(mapping_id).path, it->second);
  return it->second;
}

const NamedLocation& StackNamer::location(uint64_t id) {
  static const NamedLocation kInvalid{{{"[unknown]", model::FrameKind::unknown}}, false, true};
  if (locations_.empty()) locations_.resize(s_.locations.size() + 1);
  if (id >= locations_.size()) return kInvalid;
  NamedLocation& nl = locations_[id];
  if (!nl.named) {
    nl.kernel = for_each_frame(id, [&](std::string_view name, model::FrameKind kind) {
      nl.frames.push_back({std::string(name), kind});
    });
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

std::string process_frame_name(const ProcessTable& t, const model::Sample& smp, bool with_pid,
                               bool with_tid) {
  std::string name = t.comm(smp);
  int32_t pid = smp.pid, tid = smp.tid;
  if (with_tid) return name + "-" + std::to_string(pid) + "/" + std::to_string(tid);
  if (with_pid) return name + "-" + std::to_string(pid);
  return name;
}

}  // namespace gp::fold::detail
