// Python frames in gp-record's native stacks (see gp/record/python_frames.h).
#include "gp/record/python_frames.h"

#include <algorithm>
#include <unordered_map>

#include "record/python_eval_parts.h"
#include "runtime/python/interpreter_locator.h"
#include "runtime/python/package_versions.h"
#include "runtime/python/pyperf_name.h"
#include "runtime/python/python_sampler.h"
#include "runtime/remote/mapped_symbols.h"

namespace gp::record {

PyStackParts split_python_frames(std::span<const uint64_t> ips) {
  PyStackParts parts;
  parts.native = ips.size();
  // The marker's count says where it is: the n-th entry from the end, n - 1 frames after it.
  for (size_t count = 1; count < ips.size(); ++count) {
    const size_t at = ips.size() - 1 - count;
    const uint64_t marker = ips[at];
    if ((marker & kPyMarkerMask) != kPyMarker || (marker & 0xff) != count) continue;
    bool frames_only = std::all_of(ips.begin() + static_cast<std::ptrdiff_t>(at) + 1, ips.end(),
                                   [](uint64_t e) { return (e & kPyFrame) != 0; });
    if (!frames_only) continue;
    parts.native = at;
    parts.cut = (marker & kPyCut) != 0;
    parts.read_failed = (marker & kPyReadFailed) != 0;
    for (size_t i = at + 1; i < ips.size(); ++i) {
      const uint64_t e = ips[i];
      const uint64_t offset = (e >> kPyOffsetShift) & kPyOffsetUnknown;
      parts.frames.push_back(PyFrameRef{e & kPyCodeMask, static_cast<uint32_t>(offset),
                                        offset != kPyOffsetUnknown, (e & kPyEntry) != 0});
    }
    break;
  }
  return parts;
}

std::optional<std::vector<SplicedFrame>> splice_python_frames(std::span<const uint64_t> native,
                                                              std::span<const PyFrameRef> frames,
                                                              std::span<const AddressRange> eval) {
  auto in_eval = [&](size_t i) {
    // pc - 1: a return address's call is the instruction before it (the leaf is the pc itself).
    const uint64_t pc = i > 0 && native[i] > 0 ? native[i] - 1 : native[i];
    return std::any_of(eval.begin(), eval.end(),
                       [pc](const AddressRange& r) { return pc >= r.start && pc < r.end; });
  };
  size_t loops = 0, groups = 0;
  for (size_t i = 0; i < native.size(); ++i) loops += in_eval(i) ? 1 : 0;
  for (const PyFrameRef& f : frames) groups += f.entry ? 1 : 0;
  // Frames past the last entry belong to a loop the walk did not reach the entry of (a cut
  // chain): they cannot be placed.
  if (loops != groups || frames.empty() || !frames.back().entry) return std::nullopt;
  std::vector<SplicedFrame> out;
  out.reserve(native.size() + frames.size());
  size_t next = 0;  // the next Python frame, leaf first
  for (size_t i = 0; i < native.size(); ++i) {
    if (in_eval(i)) {
      while (next < frames.size()) {
        out.push_back({true, next});
        if (frames[next++].entry) break;
      }
    }
    out.push_back({false, i});
  }
  return out;
}

std::optional<std::vector<SplicedFrame>> splice_python_frames(std::span<const uint64_t> native,
                                                              const PyStackParts& parts,
                                                              std::span<const AddressRange> eval) {
  if (parts.cut || parts.read_failed) return std::nullopt;
  return splice_python_frames(native, parts.frames, eval);
}

struct PythonProcesses::Process {
  pid_t pid = 0;
  bool exited = false;
  std::unique_ptr<runtime::python::PythonSampler> sampler;
  std::unique_ptr<runtime::python::PackageLabels> labels;  // null: no labels
  std::vector<AddressRange> eval;
  // Frames named so far, by code object and offset: what names them once the process is gone,
  // and in the round in which they were read.
  struct Named {
    PyFrameName name;
    uint64_t round = 0;
  };
  std::unordered_map<uint64_t, Named> names;
};

namespace {

// Names kept per process (a frame's name, file and lines: about 100 bytes each).
constexpr size_t kMaxNamesPerProcess = 1 << 16;
// Exited processes whose names are kept for their last samples.
constexpr size_t kMaxExitedProcesses = 64;

uint64_t name_key(const PyFrameRef& f) {
  // 47 bits of code address, 15 of offset (kPyOffsetUnknown when unknown).
  return (f.code & kPyCodeMask) << 15 |
         (f.offset_known ? f.offset & kPyOffsetUnknown : kPyOffsetUnknown);
}

}  // namespace

PythonProcesses::PythonProcesses(bool package_labels) : package_labels_(package_labels) {}
PythonProcesses::~PythonProcesses() = default;

PythonProcesses::Process* PythonProcesses::find(pid_t pid) const {
  for (const auto& p : processes_)
    if (p->pid == pid) return p.get();
  return nullptr;
}

namespace {

PyWalkOffsets offsets_of(const runtime::python::PyLayout& l, uint64_t runtime) {
  using runtime::python::FrameModel;
  PyWalkOffsets o;
  o.runtime = runtime;
  o.code_tag_mask = l.code_tag_mask;
  o.frame_objects = l.frame_model == FrameModel::frame_object;
  o.interpreters_head = l.runtime_interpreters_head;
  o.threads_head = l.interp_threads_head;
  o.tstate_next = l.tstate_next;
  o.tstate_thread_id = l.tstate_thread_id;
  o.tstate_frame = l.tstate_frame;
  if (l.frame_model == FrameModel::cframe) o.cframe_frame = l.cframe_current_frame;
  if (o.frame_objects) {
    o.frame_previous = l.frame_back;
    o.frame_code = l.frame_code;
    o.frame_instr = l.frame_lasti;
    o.lasti_bytes = l.minor < 10;
    o.frame_read = std::max({l.frame_back, l.frame_code, l.frame_lasti}) + 8;
  } else {
    o.frame_previous = l.iframe_previous;
    o.frame_code = l.iframe_code;
    o.frame_instr = l.iframe_instr;
    o.frame_is_entry = l.iframe_is_entry;
    // 3.11 has no entry shims: its owner values are all Python code.
    if (!l.iframe_is_entry) o.frame_owner = l.iframe_owner;
    o.owner_shim = runtime::python::kFrameOwnedByCStack;
    o.code_adaptive = l.code_code_adaptive;
    o.frame_read = std::max({l.iframe_previous, l.iframe_code, l.iframe_instr, l.iframe_owner,
                             l.iframe_is_entry.value_or(0)}) +
                   8;
  }
  return o;
}

// The parts of pid's evaluation loop past its symbol, link-time (python_eval_parts.h).
std::vector<AddressRange> eval_parts(pid_t pid, const runtime::python::InterpreterInfo& info) {
  auto maps = runtime::remote::read_maps(pid);
  if (!maps) return {};
  const runtime::remote::MapsEntry* m = runtime::python::pick_interpreter_mapping(*maps);
  if (m == nullptr || m->path != info.path) return {};
  auto file = runtime::remote::open_mapped_file(pid, *m);
  if (!file) return {};
  return eval_loop_parts(*file, info.eval_start - info.bias, info.eval_end - info.bias);
}

}  // namespace

Result<PyWalkOffsets> PythonProcesses::attach(pid_t pid) {
  auto attached = runtime::python::PythonSampler::attach(pid);
  if (auto* failure = std::get_if<runtime::python::AttachFailure>(&attached))
    return make_error(failure->reason);
  auto sampler = std::move(std::get<0>(attached));
  const auto& info = sampler->interpreter();
  PyWalkOffsets offsets = offsets_of(sampler->layout(), info.runtime_address);
  if (offsets.frame_read > 128)
    return make_error("CPython " + info.version.text() + ": frame fields past 128 bytes");
  forget(pid);
  auto p = std::make_unique<Process>();
  p->pid = pid;
  if (info.eval_end > info.eval_start) {
    p->eval.push_back({info.eval_start, info.eval_end});
    for (const AddressRange& part : eval_parts(pid, info))
      p->eval.push_back({part.start + info.bias, part.end + info.bias});
  }
  if (package_labels_)
    p->labels = std::make_unique<runtime::python::PackageLabels>(
        pid, "/proc/" + std::to_string(pid) + "/root" + info.path);
  p->sampler = std::move(sampler);
  processes_.push_back(std::move(p));
  return offsets;
}

void PythonProcesses::forget(pid_t pid) {
  std::erase_if(processes_, [pid](const std::unique_ptr<Process>& p) { return p->pid == pid; });
}

void PythonProcesses::exited(pid_t pid) {
  Process* p = find(pid);
  if (p == nullptr || p->exited) return;
  p->exited = true;
  p->sampler.reset();  // its memory and files are gone: nothing more is read
  p->labels.reset();
  exited_order_.push_back(pid);
  while (exited_order_.size() > kMaxExitedProcesses) {
    const pid_t oldest = exited_order_.front();
    exited_order_.pop_front();
    if (const Process* o = find(oldest); o != nullptr && o->exited) forget(oldest);
  }
}

void PythonProcesses::prename(pid_t pid, std::span<const uint64_t> ips) {
  Process* p = find(pid);
  if (p == nullptr || p->exited) return;
  PyFrameName unused;
  for (const PyFrameRef& f : split_python_frames(ips).frames) name(pid, f, unused);
}

bool PythonProcesses::walked(pid_t pid) const { return find(pid) != nullptr; }

std::span<const AddressRange> PythonProcesses::eval_ranges(pid_t pid) const {
  const Process* p = find(pid);
  return p ? std::span<const AddressRange>(p->eval) : std::span<const AddressRange>();
}

bool PythonProcesses::name(pid_t pid, const PyFrameRef& frame, PyFrameName& out) {
  Process* p = find(pid);
  if (p == nullptr) return false;
  const uint64_t key = name_key(frame);
  auto known = p->names.find(key);
  if (known != p->names.end() && (p->exited || known->second.round == round_)) {
    out = known->second.name;
    return true;
  }
  runtime::python::PyFrameInfo info;
  const auto status = p->exited ? runtime::python::WalkStatus::gone
                                : p->sampler->describe(frame.code, uint64_t{frame.offset} * 2,
                                                       frame.offset_known, info);
  if (status != runtime::python::WalkStatus::ok) {
    // A live process's code object is named afresh (the address may hold another one now); a
    // gone one's as it was named last.
    if (status != runtime::python::WalkStatus::gone || known == p->names.end()) return false;
    out = known->second.name;
    return true;
  }
  out.name = runtime::python::pyperf_frame_name(info.file, info.name);
  out.package = p->labels ? p->labels->of(info.file) : std::string();
  out.file = std::move(info.file);
  out.first_line = info.first_line;
  out.line = info.line;
  if (known != p->names.end()) {
    known->second = {out, round_};
  } else {
    if (p->names.size() >= kMaxNamesPerProcess) p->names.clear();
    p->names.emplace(key, Process::Named{out, round_});
  }
  return true;
}

}  // namespace gp::record
