#include "import/perf_dso.h"

namespace gp::import {
namespace {

using model::FrameKind;
using model::MappingKind;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

DsoClass classify_bracketed(std::string_view dso) {
  if (starts_with(dso, "[kernel.") || starts_with(dso, "[guest.kernel"))
    return {MappingKind::kernel, FrameKind::kernel, true};
  if (starts_with(dso, "[vdso") || dso == "[vsyscall]")
    return {MappingKind::vdso, FrameKind::native, false};
  if (dso == "[heap]" || dso == "[stack]" || starts_with(dso, "[anon") || dso == "[uprobes]")
    return {MappingKind::anonymous, FrameKind::native, false};
  if (starts_with(dso, "[JIT]"))  // perf's name for code it saw only through jitdump records
    return {MappingKind::anonymous, FrameKind::jit, false};
  // Anything else in brackets is a kernel module ("[nf_tables]", "[kvm_amd]").
  return {MappingKind::module, FrameKind::kernel, true};
}

}  // namespace

DsoClass classify_dso(std::string_view dso) {
  if (!dso.empty() && dso.front() == '[') return classify_bracketed(dso);
  std::string_view path = dso;
  if (ends_with(path, " (deleted)")) path.remove_suffix(10);
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (starts_with(base, "perf-") && ends_with(base, ".map"))
    return {MappingKind::jit_map, FrameKind::jit, false};
  if (starts_with(base, "jitted-") && ends_with(base, ".so"))  // perf inject --jit output
    return {MappingKind::user, FrameKind::jit, false};
  if (starts_with(base, "vmlinux")) return {MappingKind::kernel, FrameKind::kernel, true};
  if (ends_with(base, ".ko") || base.find(".ko.") != std::string_view::npos)
    return {MappingKind::module, FrameKind::kernel, true};
  if (starts_with(path, "//anon")) return {MappingKind::anonymous, FrameKind::native, false};
  return {MappingKind::user, FrameKind::native, false};
}

}  // namespace gp::import
