#pragma once
// Which resolver a location goes to (private to src/symbolize).

#include "gp/model/session.h"

namespace gp::symbolize {

enum class LocationClass {
  done,      // resolved or born symbolic: never touched again
  user,      // a file-backed (or vDSO) mapping: resolved against its binary
  kernel,    // kernel image or module: the archive's kallsyms subset
  jit,       // anonymous memory / perf-map mapping: the archive's perf maps
  unmapped,  // in no known mapping
};

// any_status: classify resolved locations too (by where they would be resolved).
inline LocationClass classify(const model::Session& s, const model::Location& loc,
                              bool any_status = false) {
  using model::MappingKind;
  if (loc.status == model::SymbolStatus::symbolic) return LocationClass::done;
  if (!any_status && loc.status == model::SymbolStatus::resolved) return LocationClass::done;
  if (loc.kind == model::FrameKind::kernel) return LocationClass::kernel;
  if (loc.mapping_id == 0 || loc.mapping_id > s.mappings.size()) return LocationClass::unmapped;
  switch (s.mapping(loc.mapping_id).kind) {
    case MappingKind::kernel:
    case MappingKind::module:
      return LocationClass::kernel;
    case MappingKind::anonymous:
    case MappingKind::jit_map:
      return LocationClass::jit;
    case MappingKind::user:
    case MappingKind::vdso:
      break;
  }
  return LocationClass::user;
}

}  // namespace gp::symbolize
