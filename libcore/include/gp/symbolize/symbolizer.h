#pragma once
// symbolize_session: fills Location.lines and Location.status of one archive session.
//
// Which locations: every address location (not `symbolic`) that is not `resolved` yet, so a run
// over an already symbolized session changes nothing, and a second run with another symbol store
// fills only what the first left open. User frames are resolved per binary (grouped by build-id,
// else path; each file opened once, its addresses looked up in one batch, then closed), the
// binaries spread over `jobs` worker threads; kernel frames come from Session.kernel_symbols,
// JIT frames from Session.jit_maps of the same pid. Results are interned into the session's
// function table in a fixed order, so the output is the same for any `jobs`.
//
// Afterwards the session has header.symbolized = true and counters `symbolize.<status>`
// (resolved, no-file, build-id-mismatch, no-symbol, unmapped) counting the final status of its
// address locations.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gp/model/session.h"
#include "gp/symbolize/debuginfo_finder.h"
#include "gp/symbolize/module_resolver.h"

namespace gp::symbolize {

struct SymbolizeOptions {
  FinderOptions finder;
  ResolverOptions resolver;
  unsigned jobs = 1;  // worker threads over binaries; 0 counts as 1
  // Told as each binary is done (binaries done, binaries to do), for a progress line; may be
  // called from worker threads.
  std::function<void(size_t done, size_t total)> on_binary_done;
};

// One binary the session refers to (every user/vdso mapping with the same build-id, or the same
// path when there is none).
struct ModuleRef {
  std::string build_id;                // raw bytes, may be empty
  std::vector<std::string> paths;      // distinct recorded paths, first seen first
  std::vector<uint64_t> location_ids;  // address locations still to resolve
};

// What happened to one binary in a run.
struct ModuleReport {
  std::string path;         // first recorded path
  std::string build_id;     // raw bytes
  FoundFiles files;         // where binary and debug info were found (status says if not)
  uint64_t frames = 0;      // locations looked up
  uint64_t unresolved = 0;  // of those, still not resolved
  std::string error;        // the file was found but could not be loaded
};

struct SymbolizeReport {
  // Final status of every address location of the session, indexed by model::SymbolStatus.
  std::array<uint64_t, 7> by_status{};
  uint64_t newly_resolved = 0;
  std::vector<ModuleReport> modules;  // binaries looked at in this run, in session order

  uint64_t count(model::SymbolStatus s) const { return by_status[static_cast<size_t>(s)]; }
  // Address locations that are not resolved (what --strict turns into exit status 3).
  uint64_t misses() const;
};

// The binaries of the session's user and vDSO frames, in order of first use: only those with
// frames still unresolved, or (all = true) every one a frame refers to.
std::vector<ModuleRef> modules_to_resolve(const model::Session& session, bool all = false);

SymbolizeReport symbolize_session(model::Session& session, const SymbolizeOptions& options);

}  // namespace gp::symbolize
