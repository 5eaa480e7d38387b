#pragma once
// The kernel's symbol table (/proc/kallsyms) for symbolizing sampled kernel addresses, and the
// subset of it that goes into an archive (the analysis host runs another kernel).
//
// Addresses are only real for root (or CAP_SYSLOG with kernel.kptr_restrict < 2); otherwise the
// kernel prints zeros. load() detects that and says so instead of returning a useless table.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::proc {

class KallsymsTable {
 public:
  // Loads and sorts path (default /proc/kallsyms). Lines are "ADDR TYPE NAME [\t[MODULE]]".
  // Only text-ish symbols are kept (types t/T/w/W, so that a data symbol never ends a function
  // early); lines that do not parse are skipped. Errors: unreadable file, no usable line, or
  // every address zero (message names kernel.kptr_restrict and the need for root).
  static Result<KallsymsTable> load(const std::string& path = "/proc/kallsyms");
  // Parses kallsyms text already in memory (same rules as load()).
  static Result<KallsymsTable> parse(std::string_view text);

  // The symbol containing addr: the last entry with address <= addr (of entries with equal
  // addresses, the first in file order). nullptr when addr is below the first entry, or is
  // kMaxLastSymbolSize or more past the last entry (whose end is unknown).
  const model::KernelSymbol* lookup(uint64_t addr) const;

  // The entries needed to symbolize `addresses` elsewhere: for each address its containing
  // symbol and the next entry (so the containing symbol's end is known), deduplicated, sorted by
  // address.
  std::vector<model::KernelSymbol> covering(const std::vector<uint64_t>& addresses) const;
  // parse(text).covering(addresses) without the table: only the kept symbols get their names
  // made (a whole table's strings and its sort were most of a small import's time).
  static Result<std::vector<model::KernelSymbol>> covering_in(
      std::string_view text, const std::vector<uint64_t>& addresses);
  // The same for a file: a saved copy is mapped, /proc/kallsyms read (load()'s errors).
  static Result<std::vector<model::KernelSymbol>> covering_in_file(
      const std::string& path, const std::vector<uint64_t>& addresses);

  size_t size() const { return symbols_.size(); }
  const std::vector<model::KernelSymbol>& symbols() const { return symbols_; }

  static constexpr uint64_t kMaxLastSymbolSize = 1 << 20;

 private:
  size_t index_of(uint64_t addr) const;       // npos-like: symbols_.size() when none
  std::vector<model::KernelSymbol> symbols_;  // sorted by address, stable
};

}  // namespace gp::proc
