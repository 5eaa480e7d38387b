// gp-runtime's registry: the mode values gProfiler spells per runtime and the adapters built in.
#include "gp/runtime/registry.h"

#include <algorithm>
#include <array>

#include "gp/runtime/adapters.h"

namespace gp::runtime {
namespace {

// The adapters compiled into this build: one line per adapter, {runtime, canonical mode, factory}.
// Adapters add their entries here (only their own lines), once their factory is implemented;
// a mode without an entry is reported per process as "not available in this build".
// A sentinel keeps the array non-empty; registered_adapters() drops it.
const AdapterEntry kAdapters[] = {
    // adapters add their entries here
    {Runtime::java, "ap", make_async_profiler_adapter},
    {Runtime::java, "jfr", make_jfr_adapter},
    {Runtime::ruby, "rbspy", make_rbspy_adapter},
    {Runtime::ruby, "gp", make_gp_ruby_adapter},
    {Runtime::php, "phpspy", make_phpspy_adapter},
    {Runtime::php, "gp", make_gp_php_adapter},
    {Runtime::dotnet, "dotnet-trace", make_dotnet_trace_adapter},
    {Runtime::python, "pyspy", make_py_spy_adapter},
    {Runtime::python, "gp", make_gp_python_adapter},
    {Runtime::node, "perf", make_node_perf_adapter},
    {Runtime::node, "attach-maps", make_node_attach_maps_adapter},
    {Runtime::node, "inspector", make_node_inspector_adapter},
    {Runtime::java, "", nullptr},  // sentinel, keep last
};

const std::array<Runtime, 6> kRuntimes = {Runtime::java, Runtime::python, Runtime::ruby,
                                          Runtime::php,  Runtime::dotnet, Runtime::node};

// gProfiler's spellings (gprofiler.md §5.1); "none" is its legacy alias of "disabled".
const std::vector<RuntimeModes>& modes_table() {
  static const std::vector<RuntimeModes> table = {
      {Runtime::java, "java", {"auto", "ap", "jfr", "disabled"}, {"none"}, "auto", {"ap", "jfr"}},
      {Runtime::python,
       "python",
       {"auto", "pyspy", "gp", "disabled"},
       {"py-spy", "pyperf", "none"},
       "auto",
       {"pyspy", "gp"}},
      {Runtime::ruby,
       "ruby",
       {"auto", "rbspy", "gp", "disabled"},
       {"none"},
       "auto",
       {"rbspy", "gp"}},
      {Runtime::php,
       "php",
       {"auto", "phpspy", "gp", "disabled"},
       {"none"},
       "disabled",
       {"phpspy", "gp"}},
      {Runtime::dotnet, "dotnet", {"dotnet-trace", "disabled"}, {"none"}, "disabled", {}},
      {Runtime::node,
       "nodejs",
       {"attach-maps", "perf", "inspector", "disabled"},
       {"none"},
       "disabled",
       {}},
  };
  return table;
}

const AdapterEntry* find_entry(std::span<const AdapterEntry> table, Runtime r,
                               std::string_view mode) {
  for (const auto& e : table) {
    if (e.runtime == r && e.mode == mode && e.factory != nullptr) return &e;
  }
  return nullptr;
}

std::string not_in_build(Runtime r, std::string_view mode) {
  return std::string(runtime_name(r)) + " mode '" + std::string(mode) +
         "' is not available in this build";
}

AdapterChoice choose_auto(Runtime r, std::span<const AdapterEntry> table) {
  std::string reasons;
  for (auto mode : runtime_modes(r).auto_order) {
    const AdapterEntry* e = find_entry(table, r, mode);
    if (e == nullptr) continue;
    auto adapter = e->factory();
    std::string why = adapter->unavailable_reason();
    if (why.empty()) return {std::move(adapter), std::string(mode), ""};
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  if (reasons.empty()) return {nullptr, "auto", not_in_build(r, "auto")};
  return {nullptr, "auto", "no " + std::string(runtime_name(r)) + " profiler can run: " + reasons};
}

}  // namespace

std::span<const Runtime> all_runtimes() { return kRuntimes; }

const RuntimeModes& runtime_modes(Runtime r) {
  for (const auto& m : modes_table()) {
    if (m.runtime == r) return m;
  }
  return modes_table().front();  // unreachable: every Runtime has a row
}

std::span<const AdapterEntry> registered_adapters() {
  return std::span<const AdapterEntry>(kAdapters, std::size(kAdapters) - 1);
}

std::vector<std::string> accepted_mode_values(Runtime r) {
  const auto& m = runtime_modes(r);
  std::vector<std::string> out(m.modes.begin(), m.modes.end());
  out.insert(out.end(), m.aliases.begin(), m.aliases.end());
  return out;
}

Result<std::string> normalize_mode(Runtime r, std::string_view value,
                                   std::vector<std::string>* warnings) {
  const auto& m = runtime_modes(r);
  if (std::find(m.modes.begin(), m.modes.end(), value) != m.modes.end()) {
    return std::string(value);
  }
  if (value == "none") return std::string("disabled");
  if (r == Runtime::python && value == "py-spy") return std::string("pyspy");
  if (r == Runtime::python && value == "pyperf") {
    // gProfiler's PyPerf is an eBPF unwinder gp does not ship; its users want Python stacks.
    if (warnings != nullptr) {
      warnings->push_back("--python-mode pyperf is not supported by gp: using 'auto' instead");
    }
    return std::string("auto");
  }
  std::string allowed;
  for (const auto& v : accepted_mode_values(r)) allowed += (allowed.empty() ? "" : ", ") + v;
  return make_error("invalid --" + std::string(m.option) + "-mode '" + std::string(value) +
                    "': expected one of " + allowed);
}

AdapterChoice choose_adapter(Runtime r, std::string_view canonical_mode,
                             std::span<const AdapterEntry> table) {
  if (canonical_mode == "disabled") {
    return {nullptr, "disabled",
            std::string(runtime_name(r)) + " profiling is disabled (--" +
                std::string(runtime_modes(r).option) + "-mode disabled)"};
  }
  if (canonical_mode == "auto") return choose_auto(r, table);
  const AdapterEntry* e = find_entry(table, r, canonical_mode);
  if (e == nullptr) return {nullptr, std::string(canonical_mode), not_in_build(r, canonical_mode)};
  auto adapter = e->factory();
  std::string why = adapter->unavailable_reason();
  if (!why.empty()) return {nullptr, std::string(canonical_mode), why};
  return {std::move(adapter), std::string(canonical_mode), ""};
}

AdapterChoice choose_adapter(Runtime r, std::string_view canonical_mode) {
  return choose_adapter(r, canonical_mode, registered_adapters());
}

}  // namespace gp::runtime
