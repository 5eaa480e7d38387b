// KallsymsTable: /proc/kallsyms loaded, sorted and queried (contract in gp/proc/kallsyms.h).

#include "gp/proc/kallsyms.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "proc/proc_files.h"

namespace gp::proc {
namespace {

constexpr size_t kMaxKallsyms = 256u << 20;

// Code symbols only: a data symbol between two functions would cut the first one short.
bool is_code_type(char t) { return t == 't' || t == 'T' || t == 'w' || t == 'W'; }

// The address and type of a "ADDR TYPE NAME..." line; false when it does not parse.
bool parse_head(std::string_view line, uint64_t& address, char& type) {
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0 || sp1 + 3 > line.size() || line[sp1 + 2] != ' ')
    return false;
  if (!parse_u64(line.substr(0, sp1), address, 16)) return false;
  type = line[sp1 + 1];
  return true;
}

// "ADDR TYPE NAME" optionally followed by "\t[MODULE]". The name and module are read for code
// symbols only: most lines are data, and their strings were most of the parsing time.
bool parse_line(std::string_view line, model::KernelSymbol& sym) {
  if (!parse_head(line, sym.address, sym.type)) return false;
  if (!is_code_type(sym.type)) return true;
  std::string_view rest = line.substr(line.find(' ') + 3);
  const size_t tab = rest.find('\t');
  std::string_view name = rest.substr(0, tab);
  if (name.empty()) return false;
  sym.name = std::string(name);
  sym.module.clear();
  if (tab != std::string_view::npos) {
    std::string_view mod = rest.substr(tab + 1);
    if (mod.size() >= 2 && mod.front() == '[' && mod.back() == ']')
      sym.module = std::string(mod.substr(1, mod.size() - 2));
  }
  return true;
}

// The entry containing addr in `entries` (sorted by address, stable): the last one at or below
// it, the first in file order of equal addresses; entries.size() when none (see lookup()).
template <typename Entries>
size_t index_in(const Entries& entries, uint64_t addr) {
  auto it = std::upper_bound(entries.begin(), entries.end(), addr,
                             [](uint64_t a, const auto& s) { return a < s.address; });
  if (it == entries.begin()) return entries.size();
  size_t idx = static_cast<size_t>(it - entries.begin()) - 1;
  // The last symbol's end is unknown: attribute only a bounded distance to it.
  if (it == entries.end() && addr - entries[idx].address >= KallsymsTable::kMaxLastSymbolSize)
    return entries.size();
  while (idx > 0 && entries[idx - 1].address == entries[idx].address) --idx;
  return idx;
}

// The indexes covering() keeps, ascending and distinct.
template <typename Entries>
std::vector<size_t> covering_indexes(const Entries& entries,
                                     const std::vector<uint64_t>& addresses) {
  std::vector<size_t> wanted;
  wanted.reserve(addresses.size() * 2);
  for (uint64_t addr : addresses) {
    const size_t idx = index_in(entries, addr);
    if (idx >= entries.size()) continue;
    wanted.push_back(idx);
    // The first entry at a higher address bounds the containing symbol.
    auto next = std::upper_bound(entries.begin() + static_cast<std::ptrdiff_t>(idx), entries.end(),
                                 entries[idx].address,
                                 [](uint64_t a, const auto& s) { return a < s.address; });
    if (next != entries.end()) wanted.push_back(static_cast<size_t>(next - entries.begin()));
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  return wanted;
}

// Room for every line of `text`, reserved at once: the lists are large (~200k symbols).
size_t line_count(std::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

// Calls on_code(address, line, offset) for the line of each named code symbol in `text`, in
// file order. The error of a text without a symbol line, or whose addresses are all zero.
template <typename OnCode>
Status scan_lines(std::string_view text, OnCode on_code) {
  size_t parsed = 0;
  bool any_nonzero = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const size_t offset = pos;
    pos = end + 1;
    uint64_t address;
    char type;
    if (!parse_head(line, address, type)) continue;
    if (is_code_type(type)) {
      // A code line without a name does not count.
      const std::string_view rest = line.substr(line.find(' ') + 3);
      if (rest.empty() || rest.front() == '\t') continue;
      on_code(address, line, offset);
    }
    ++parsed;
    any_nonzero = any_nonzero || address != 0;
  }
  if (parsed == 0) return make_error("no kernel symbols found");
  if (!any_nonzero) {
    return make_error(
        "kernel symbol addresses are hidden (all zero): run as root, or lower "
        "kernel.kptr_restrict");
  }
  return ok_status();
}

// A code symbol's line in the text, for covering_in(): names are made for the few kept only.
struct LineRef {
  uint64_t address;
  size_t offset;
  size_t size;
};

}  // namespace

Result<KallsymsTable> KallsymsTable::parse(std::string_view text) {
  KallsymsTable table;
  table.symbols_.reserve(line_count(text));
  model::KernelSymbol sym;
  auto scanned = scan_lines(text, [&](uint64_t, std::string_view line, size_t) {
    if (parse_line(line, sym)) table.symbols_.push_back(sym);
  });
  if (!scanned) return scanned.error();
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const model::KernelSymbol& a, const model::KernelSymbol& b) {
                     return a.address < b.address;
                   });
  return table;
}

// A parse error of /proc/kallsyms names kernel.kptr_restrict's value.
static Error with_restrict_value(const std::string& path, const Error& e) {
  if (path != "/proc/kallsyms") return e;
  auto restrict_value = read_file("/proc/sys/kernel/kptr_restrict", 64);
  if (!restrict_value) return e;
  return Error{e.message + " (kernel.kptr_restrict=" + std::string(chomp(*restrict_value)) + ")"};
}

Result<KallsymsTable> KallsymsTable::load(const std::string& path) {
  auto text = read_file(path, kMaxKallsyms);
  if (!text) return make_error("cannot read '" + path + "': " + text.error().message);
  auto table = parse(*text);
  if (!table) return with_restrict_value(path, table.error());
  return table;
}

Result<std::vector<model::KernelSymbol>> KallsymsTable::covering_in_file(
    const std::string& path, const std::vector<uint64_t>& addresses) {
  // A saved copy (perf's build-id cache, --kallsyms) is mapped and read in place; /proc/kallsyms
  // has no size and is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map != MAP_FAILED) {
      auto symbols = covering_in({static_cast<const char*>(map), size}, addresses);
      ::munmap(map, size);
      return symbols;
    }
  } else if (fd >= 0) {
    ::close(fd);
  }
  auto text = read_file(path, kMaxKallsyms);
  if (!text) return make_error("cannot read '" + path + "': " + text.error().message);
  auto symbols = covering_in(*text, addresses);
  if (!symbols) return with_restrict_value(path, symbols.error());
  return symbols;
}

size_t KallsymsTable::index_of(uint64_t addr) const { return index_in(symbols_, addr); }

const model::KernelSymbol* KallsymsTable::lookup(uint64_t addr) const {
  const size_t idx = index_of(addr);
  return idx < symbols_.size() ? &symbols_[idx] : nullptr;
}

std::vector<model::KernelSymbol> KallsymsTable::covering(
    const std::vector<uint64_t>& addresses) const {
  std::vector<model::KernelSymbol> out;
  for (size_t idx : covering_indexes(symbols_, addresses)) out.push_back(symbols_[idx]);
  return out;
}

Result<std::vector<model::KernelSymbol>> KallsymsTable::covering_in(
    std::string_view text, const std::vector<uint64_t>& addresses) {
  std::vector<LineRef> lines;
  lines.reserve(line_count(text));
  auto scanned = scan_lines(text, [&](uint64_t address, std::string_view line, size_t offset) {
    lines.push_back({address, offset, line.size()});
  });
  if (!scanned) return scanned.error();
  // The kernel prints its own symbols in address order: most files need no sorting at all.
  auto by_address = [](const LineRef& a, const LineRef& b) { return a.address < b.address; };
  if (!std::is_sorted(lines.begin(), lines.end(), by_address))
    std::stable_sort(lines.begin(), lines.end(), by_address);
  std::vector<model::KernelSymbol> out;
  for (size_t idx : covering_indexes(lines, addresses)) {
    model::KernelSymbol sym;
    parse_line(text.substr(lines[idx].offset, lines[idx].size), sym);
    out.push_back(std::move(sym));
  }
  return out;
}

}  // namespace gp::proc
