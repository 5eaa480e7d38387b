// KallsymsTable: /proc/kallsyms loaded, sorted and queried (contract in gp/proc/kallsyms.h).

#include "gp/proc/kallsyms.h"

#include <algorithm>
#include <set>

#include "proc/proc_files.h"

namespace gp::proc {
namespace {

constexpr size_t kMaxKallsyms = 256u << 20;

// Code symbols only: a data symbol between two functions would cut the first one short.
bool is_code_type(char t) { return t == 't' || t == 'T' || t == 'w' || t == 'W'; }

// "ADDR TYPE NAME" optionally followed by "\t[MODULE]". The name and module are read for code
// symbols only: most lines are data, and their strings were most of the parsing time.
bool parse_line(std::string_view line, model::KernelSymbol& sym) {
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0 || sp1 + 3 > line.size() || line[sp1 + 2] != ' ')
    return false;
  if (!parse_u64(line.substr(0, sp1), sym.address, 16)) return false;
  sym.type = line[sp1 + 1];
  if (!is_code_type(sym.type)) return true;
  std::string_view rest = line.substr(sp1 + 3);
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

}  // namespace

Result<KallsymsTable> KallsymsTable::parse(std::string_view text) {
  KallsymsTable table;
  size_t parsed = 0;
  bool any_nonzero = false;
  model::KernelSymbol sym;
  table.symbols_.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!parse_line(line, sym)) continue;
    ++parsed;
    any_nonzero = any_nonzero || sym.address != 0;
    if (is_code_type(sym.type)) table.symbols_.push_back(sym);
  }
  if (parsed == 0) return make_error("no kernel symbols found");
  if (!any_nonzero) {
    return make_error(
        "kernel symbol addresses are hidden (all zero): run as root, or lower "
        "kernel.kptr_restrict");
  }
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const model::KernelSymbol& a, const model::KernelSymbol& b) {
                     return a.address < b.address;
                   });
  return table;
}

Result<KallsymsTable> KallsymsTable::load(const std::string& path) {
  auto text = read_file(path, kMaxKallsyms);
  if (!text) return make_error("cannot read '" + path + "': " + text.error().message);
  auto table = parse(*text);
  if (!table && path == "/proc/kallsyms") {
    auto restrict_value = read_file("/proc/sys/kernel/kptr_restrict", 64);
    if (restrict_value) {
      return make_error(table.error().message +
                        " (kernel.kptr_restrict=" + std::string(chomp(*restrict_value)) + ")");
    }
  }
  return table;
}

size_t KallsymsTable::index_of(uint64_t addr) const {
  auto it =
      std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                       [](uint64_t a, const model::KernelSymbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return symbols_.size();
  size_t idx = static_cast<size_t>(it - symbols_.begin()) - 1;
  // The last symbol's end is unknown: attribute only a bounded distance to it.
  if (it == symbols_.end() && addr - symbols_[idx].address >= kMaxLastSymbolSize)
    return symbols_.size();
  while (idx > 0 && symbols_[idx - 1].address == symbols_[idx].address) --idx;
  return idx;
}

const model::KernelSymbol* KallsymsTable::lookup(uint64_t addr) const {
  const size_t idx = index_of(addr);
  return idx < symbols_.size() ? &symbols_[idx] : nullptr;
}

std::vector<model::KernelSymbol> KallsymsTable::covering(
    const std::vector<uint64_t>& addresses) const {
  std::set<size_t> wanted;
  for (uint64_t addr : addresses) {
    const size_t idx = index_of(addr);
    if (idx >= symbols_.size()) continue;
    wanted.insert(idx);
    // The first entry at a higher address bounds the containing symbol.
    auto next = std::upper_bound(
        symbols_.begin() + static_cast<std::ptrdiff_t>(idx), symbols_.end(), symbols_[idx].address,
        [](uint64_t a, const model::KernelSymbol& s) { return a < s.address; });
    if (next != symbols_.end()) wanted.insert(static_cast<size_t>(next - symbols_.begin()));
  }
  std::vector<model::KernelSymbol> out;
  out.reserve(wanted.size());
  for (size_t idx : wanted) out.push_back(symbols_[idx]);
  return out;
}

}  // namespace gp::proc
