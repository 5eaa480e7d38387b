#pragma once
// ModuleResolver: names for file offsets of one binary, through libdwfl/libdw.
//
// Addresses in are *file offsets* (Location.file_offset, the normalized address), turned into
// link-time addresses with the file's PT_LOAD headers, so the same resolver serves every
// process that mapped the file, wherever ASLR put it. Symbols come from .symtab, else .dynsym,
// plus MiniDebugInfo (.gnu_debugdata) — libdwfl merges them; DWARF (from the binary or the
// separate debug file) gives inline chains and lines. Go binaries whose .symtab was stripped
// are named from .gopclntab.
//
// Not thread-safe: one resolver per thread (resolvers of different files may run in parallel).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gp/symbolize/debuginfo_finder.h"
#include "gp/symbolize/demangle.h"
#include "gp/util/result.h"

namespace gp::symbolize {

struct ResolverOptions {
  DemangleMode demangle = DemangleMode::full;
  bool lines = false;   // fill file, line, column, decl_line
  bool inlines = true;  // expand inline chains (needs DWARF)
};

// One function of an inline chain.
struct Frame {
  std::string name;         // display name (demangled per options)
  std::string system_name;  // linkage (mangled) name when it differs from name, else ""
  std::string file;         // source file of `line` (lines only)
  uint32_t line = 0;        // line in this function (for outer frames: the call site)
  uint32_t column = 0;
  std::string decl_file;  // where the function is defined (lines only)
  uint32_t decl_line = 0;
  // Same non-zero value for every frame of this resolver with the same name, system_name,
  // decl_file and decl_line (a callers' cache key: no need to compare the strings); 0 = unknown.
  uint32_t function_slot = 0;
};

class ModuleResolver {
 public:
  // Opens files.binary (and files.debug when set). Error when neither opens as ELF.
  static Result<std::unique_ptr<ModuleResolver>> open(const FoundFiles& files,
                                                      const ResolverOptions& options);
  ~ModuleResolver();
  ModuleResolver(const ModuleResolver&) = delete;
  ModuleResolver& operator=(const ModuleResolver&) = delete;

  // The chain for one address, outermost first (the last entry is the innermost inlined
  // function, or the function itself). Empty when no symbol covers the address. For return
  // addresses (callers' frames) the byte before is looked up, so the call instruction — not
  // the one after it, which may belong to the next line or function — is named.
  //
  // mapping_offset is the file offset of the recorded mapping holding the address
  // (Mapping.file_offset). It is needed only when the file is a separate debug file standing in
  // for a binary that was not found, since such files keep no usable segment offsets.
  std::vector<Frame> resolve(uint64_t file_offset, bool return_address,
                             uint64_t mapping_offset = kNoMapping);

  static constexpr uint64_t kNoMapping = ~uint64_t{0};

  // True for Go binaries (.gopclntab / Go build-id note): frames are of kind go.
  bool is_go() const { return is_go_; }
  const std::string& debug_file() const { return debug_path_; }

  struct Impl;

 private:
  ModuleResolver() = default;
  std::optional<uint64_t> link_address(uint64_t file_offset, uint64_t mapping_offset) const;
  std::unique_ptr<Impl> impl_;
  std::string debug_path_;
  bool is_go_ = false;
};

}  // namespace gp::symbolize
