#pragma once
// How gp-import classifies the DSO names perf prints (private to libcore/src/import).

#include <string_view>

#include "gp/model/session.h"

namespace gp::import {

struct DsoClass {
  model::MappingKind mapping = model::MappingKind::user;
  model::FrameKind frame = model::FrameKind::native;
  bool kernel_space = false;  // kernel image or module: mapping shared by all processes (pid 0)
};

// Classifies a DSO as printed by perf, without its parentheses ("[kernel.kallsyms]",
// "/usr/lib/libc.so.6", "/tmp/perf-42.map", "/x.so (deleted)"). Callers handle "[unknown]".
DsoClass classify_dso(std::string_view dso);

// True for the DSO names perf prints when it does not know the DSO.
inline bool is_unknown_dso(std::string_view dso) {
  return dso.empty() || dso == "[unknown]" || dso == "unknown";
}

}  // namespace gp::import
