#pragma once
// DebugInfoFinder: where the binary and the debug info of one recorded mapping are on this
// machine. Every candidate is checked against the recorded build-id (a file whose build-id
// differs is never used); the order is documented in gp-symbolize(1), FILES:
//
//   binary (symbols, program headers):
//     1. each --debug-dir DIR: DIR/.build-id/xx/rest (and perf's DIR/.build-id/xx/rest/elf)
//        then the sidecar store next to the archive (ARCHIVE.symbols), laid out the same way
//     2. --sysroot ROOT: ROOT + recorded path
//     3. the recorded path itself; for a recorded [vdso], this machine's own vDSO (same kernel
//        build: the build-id must match)
//   debug info (DWARF, full .symtab), sought when the binary has no DWARF:
//     4. each --debug-dir DIR: DIR/.build-id/xx/rest.debug (and DIR/.build-id/xx/rest/debug),
//        then the sidecar store
//     5. ROOT/usr/lib/debug/.build-id/xx/rest.debug
//     6. /usr/lib/debug/.build-id/xx/rest.debug (system_debug_root)
//     7. .gnu_debuglink of the binary: its dir, dir/.debug, /usr/lib/debug/dir — CRC-checked,
//        never the binary itself
//   8. debuginfod (only when enabled): the executable and/or debuginfo by build-id.
// When only a debug file is found it serves as the binary too (debug files keep the program
// headers and the full symbol table).
//
// Without a recorded build-id nothing can be checked: the recorded path (or sysroot copy) is
// taken as is, and build-id based sources are skipped.
//
// Thread-safety: find() may be called from several threads at once.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gp/symbolize/elf_file.h"

namespace gp::symbolize {

struct FinderOptions {
  std::vector<std::string> debug_dirs;
  std::string sidecar;  // store next to the archive, searched after debug_dirs; "" = none
  std::string sysroot;  // "" = none
  std::string system_debug_root = "/usr/lib/debug";  // "" disables step 6 and debuglink's 3rd dir
  bool use_recorded_path = true;
  bool debuginfod = false;  // uses DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH (libdebuginfod)
};

enum class FindStatus { found, no_file, build_id_mismatch };

// Whether libdebuginfod can be loaded: the debuginfod step (FinderOptions::debuginfod) loads it
// at its first lookup and finds nothing without it.
bool debuginfod_available();

struct FoundFiles {
  FindStatus status = FindStatus::no_file;
  std::string binary;         // file with program headers and symbols; "" when none found
  std::string debug;          // separate DWARF file, "" when none (or when binary has DWARF)
  std::string binary_source;  // where each came from: "debug-dir", "sidecar", "sysroot", "path",
  std::string debug_source;   // "system", "debuglink", "debuginfod", "" when none
  std::string mismatched;     // a file found at a candidate path with another build-id
  // `binary`, still open from the build-id check when find() opened it (null otherwise):
  // ModuleResolver::open takes it instead of opening, mapping and unmapping the file again.
  std::shared_ptr<ElfFile> opened;
};

class DebugInfoFinder {
 public:
  explicit DebugInfoFinder(FinderOptions options) : opt_(std::move(options)) {}

  // path: as recorded (/proc/PID/maps); build_id: raw bytes, may be empty.
  FoundFiles find(const std::string& path, const std::string& build_id) const;

  const FinderOptions& options() const { return opt_; }

 private:
  // On success `binary` holds the file found, open: find() looks at it again (DWARF, debuglink)
  // without opening, mapping and unmapping it again.
  bool find_binary(const std::string& path, const std::string& build_id, FoundFiles& out,
                   std::optional<ElfFile>& binary) const;
  bool find_debug(const std::string& build_id, FoundFiles& out) const;
  bool find_debuglink(const ElfFile& binary, FoundFiles& out) const;
  void find_debuginfod(const std::string& build_id, FoundFiles& out) const;

  // --debug-dir stores, then the sidecar, each with its source label.
  std::vector<std::pair<std::string, const char*>> stores() const;

  FinderOptions opt_;
};

}  // namespace gp::symbolize
