#pragma once
// gp-runtime's registry: which --<runtime>-mode values exist, and which adapter runs each.
//
// Two tables live in libcore/src/runtime/registry.cpp: the modes gProfiler spells per runtime
// (with their default and the order `auto` tries), and the adapter factories that are built
// into this binary. A mode may be known but have no factory (its adapter is not in this build);
// choosing it then yields a "[Profiling skipped: ...]" frame for each process, never an error.
//
// The driver creates one Adapter per target process (factories are cheap), so adapters never
// share state between the threads that profile different processes.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gp/runtime/adapter.h"
#include "gp/util/result.h"

namespace gp::runtime {

using AdapterFactory = std::unique_ptr<Adapter> (*)();

// One built-in adapter: `mode` is the canonical mode value that selects it ("ap", "jfr",
// "pyspy", "gp", "rbspy", "phpspy", "dotnet-trace", "perf", "attach-maps", "inspector").
struct AdapterEntry {
  Runtime runtime;
  std::string_view mode;
  AdapterFactory factory;
};

// The modes of one runtime as gProfiler spells them.
struct RuntimeModes {
  Runtime runtime;
  std::string_view option;                // "java" for --java-mode / --no-java
  std::vector<std::string_view> modes;    // canonical values, "disabled" included
  std::vector<std::string_view> aliases;  // extra accepted spellings ("none", "py-spy", ...)
  std::string_view default_mode;
  std::vector<std::string_view> auto_order;  // what `auto` tries, first available wins
};

std::span<const Runtime> all_runtimes();
const RuntimeModes& runtime_modes(Runtime r);
// The adapters compiled into this build (may be empty).
std::span<const AdapterEntry> registered_adapters();
// Every accepted spelling of --<runtime>-mode (canonical values and aliases), for CLI choices.
std::vector<std::string> accepted_mode_values(Runtime r);

// A mode value as the user typed it → canonical ("none" → "disabled", "py-spy" → "pyspy",
// "pyperf" → "auto" with a warning appended). Error when the value is not a mode of `r`.
Result<std::string> normalize_mode(Runtime r, std::string_view value,
                                   std::vector<std::string>* warnings = nullptr);

// The adapter chosen for a canonical mode. `adapter` is null when the runtime is disabled or
// nothing can run; then `skip_reason` says why (without the "[Profiling skipped: ]" wrapper).
struct AdapterChoice {
  std::unique_ptr<Adapter> adapter;
  std::string mode;         // the concrete mode picked (never "auto")
  std::string skip_reason;  // empty when adapter is set
};

// `auto` picks the first adapter of auto_order that is registered and whose
// unavailable_reason() is empty; an explicit mode picks its adapter even to report it
// unavailable (skip_reason = its unavailable_reason()).
AdapterChoice choose_adapter(Runtime r, std::string_view canonical_mode);
AdapterChoice choose_adapter(Runtime r, std::string_view canonical_mode,
                             std::span<const AdapterEntry> table);

}  // namespace gp::runtime
