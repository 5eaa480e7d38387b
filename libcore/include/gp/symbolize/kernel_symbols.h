#pragma once
// Kernel and JIT names from what the archive itself carries: the kallsyms subset
// (Session.kernel_symbols) and copies of perf maps (Session.jit_maps). Both were captured on
// the recording host for that very kernel and those very processes, so no identity check against
// the symbolizing host is needed — only against the recorded pid for JIT maps.
// Immutable after construction; lookups are thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"

namespace gp::symbolize {

class KernelSymbols {
 public:
  explicit KernelSymbols(const std::vector<model::KernelSymbol>& symbols);
  bool empty() const { return symbols_.empty(); }
  // Name of the kallsyms entry at or below address; module functions read "func [module]"
  // (perf's [module] dso name). nullopt below the first entry, or past the last one by more
  // than kMaxSymbolSize (the subset has no end addresses: a distant entry is not this one).
  std::optional<std::string> lookup(uint64_t address) const;

  static constexpr uint64_t kMaxSymbolSize = 1u << 20;

 private:
  std::vector<model::KernelSymbol> symbols_;  // sorted by address
};

class JitSymbols {
 public:
  explicit JitSymbols(const std::vector<model::JitMap>& maps);
  bool has_pid(int32_t pid) const { return by_pid_.count(pid) != 0; }
  // The perf-map entry of pid covering address (the latest line wins where entries overlap,
  // as a JIT rewrites code in place); nullopt when none.
  std::optional<std::string> lookup(int32_t pid, uint64_t address) const;

 private:
  struct Range {
    uint64_t start, end;
    size_t order;  // position in the map file
    std::string name;
  };
  std::unordered_map<int32_t, std::vector<Range>> by_pid_;  // sorted by start
  std::unordered_map<int32_t, uint64_t> max_size_;          // longest entry per pid
};

}  // namespace gp::symbolize
