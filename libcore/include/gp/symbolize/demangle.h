#pragma once
// Demangling of C++ (Itanium ABI, through abi::__cxa_demangle) and Rust legacy symbols, in the
// four styles Pyroscope's eBPF profiler offers:
//   none        the mangled name as is
//   full        everything the demangler prints: `ns::Stack<int>::push(int const&)`
//   templates   parameters dropped, template arguments kept: `ns::Stack<int>::push`
//   simplified  parameters, template arguments and return types dropped: `ns::Stack::push`
// Rust legacy names (`_ZN...17h<16 hex>E`) lose the hash and their `$LT$`-style escapes in
// every mode but none. Rust v0 (`_R...`) names are returned unchanged (__cxa_demangle does not
// know them). Names that are not mangled come back unchanged in every mode.
// Thread-safe.

#include <string>
#include <string_view>

namespace gp::symbolize {

enum class DemangleMode { none, simplified, templates, full };

std::string demangle(std::string_view name, DemangleMode mode);

// Parses "none", "simplified", "templates", "full".
bool parse_demangle_mode(std::string_view text, DemangleMode* out);

// The pieces used by demangle(), exposed for tests: drop every top-level `(...)` group
// (keeping `(anonymous namespace)` and `operator()`), then cv/ref qualifiers after them.
std::string strip_parameters(std::string_view demangled);
// Drop every `<...>` group (keeping `operator<`, `operator<<`, `operator->` ...).
std::string strip_templates(std::string_view demangled);

}  // namespace gp::symbolize
