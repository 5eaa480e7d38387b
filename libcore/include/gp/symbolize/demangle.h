#pragma once
// Demangling of C++ (Itanium ABI) and Rust (legacy and v0) symbols with libiberty's demangler
// (binutils, gdb), in the four styles Pyroscope's eBPF profiler offers:
//   none        the mangled name as is
//   full        everything the demangler prints: `ns::Stack<int>::push(int const&)`
//   templates   parameters, qualifiers and return type dropped, template arguments kept:
//               `ns::Stack<int>::push`
//   simplified  template arguments dropped too: `ns::Stack::push`
// Rust legacy names (`_ZN...17h<16 hex>E`) lose the hash and their `$LT$`-style escapes; Rust v0
// names (`_R...`) print as `mycrate::foo`. Names that are not mangled come back unchanged in
// every mode. Thread-safe.

#include <string>
#include <string_view>

namespace gp::symbolize {

enum class DemangleMode { none, simplified, templates, full };

std::string demangle(std::string_view name, DemangleMode mode);

// Parses "none", "simplified", "templates", "full".
bool parse_demangle_mode(std::string_view text, DemangleMode* out);

// The piece used by demangle() for simplified names, exposed for tests: drop every `<...>`
// group (keeping `operator<`, `operator<<`, `operator->` ...).
std::string strip_templates(std::string_view demangled);

}  // namespace gp::symbolize
