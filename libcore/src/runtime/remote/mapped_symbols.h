#pragma once
// Where a file mapped into a running process is loaded, and the run-time addresses of named
// symbols of that file (from its .symtab and .dynsym): the mechanism gp's interpreter samplers
// use to find an interpreter's globals (CPython's _PyRuntime, Ruby's ruby_current_vm_ptr, PHP's
// executor_globals).
// The file is read through /proc/PID/map_files (works across mount namespaces and for deleted
// files), else through /proc/PID/root.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gp/symbolize/elf_file.h"
#include "gp/util/result.h"

namespace gp::runtime::remote {

struct MapsEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  std::string path;
};

// The file-backed lines of a /proc/PID/maps text.
std::vector<MapsEntry> parse_maps(std::string_view text);

// /proc/PID/maps of a process; the error "process exited" when it cannot be read.
Result<std::vector<MapsEntry>> read_maps(pid_t pid, const std::string& proc_root = "/proc");

// The lowest mapping of the file whose base name satisfies `wanted` (" (deleted)" ignored),
// nullptr when none.
template <typename Pred>
const MapsEntry* lowest_mapping(const std::vector<MapsEntry>& maps, Pred wanted) {
  const MapsEntry* best = nullptr;
  for (const auto& m : maps) {
    std::string_view path = m.path;
    if (path.ends_with(" (deleted)")) path.remove_suffix(10);
    auto slash = path.rfind('/');
    if (!wanted(path.substr(slash == std::string_view::npos ? 0 : slash + 1))) continue;
    if (best == nullptr || m.start < best->start) best = &m;
  }
  return best;
}

struct MappedSymbols {
  uint64_t bias = 0;                                       // run-time address = symbol value + bias
  bool has_symbol_table = false;                           // .symtab or .dynsym present
  std::map<std::string, uint64_t, std::less<>> addresses;  // run-time addresses of those found
  // Sizes of the symbols found (ELF st_size), e.g. to bound a read of a string constant.
  std::map<std::string, uint64_t, std::less<>> sizes;

  std::optional<uint64_t> address(std::string_view name) const {
    auto it = addresses.find(name);
    if (it == addresses.end()) return std::nullopt;
    return it->second;
  }
};

// The ELF file of mapping `m`, for what else a sampler reads from it (e.g. the PHP version in
// .rodata).
Result<symbolize::ElfFile> open_mapped_file(pid_t pid, const MapsEntry& m,
                                            const std::string& proc_root = "/proc");

// Opens the file of `m` (its lowest mapping) and looks the wanted names up in its symbol tables.
// Errors: "cannot read 'PATH': why", "'PATH' has no segment at its mapped offset".
Result<MappedSymbols> mapped_symbols(pid_t pid, const MapsEntry& m,
                                     const std::vector<std::string>& names,
                                     const std::string& proc_root = "/proc");

}  // namespace gp::runtime::remote
