// Symbols of a file mapped into a live process (see mapped_symbols.h).
#include "runtime/remote/mapped_symbols.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "gp/symbolize/elf_file.h"

namespace gp::runtime::remote {
namespace {

std::optional<uint64_t> hex_field(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Values and sizes of the wanted symbols, from .symtab and .dynsym (whichever the file has).
void find_symbols(Elf* elf, const std::vector<std::string>& names, MappedSymbols& out) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || sh.sh_entsize == 0) continue;
    out.has_symbol_table = true;
    size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name == nullptr || name[0] == '\0') continue;
      std::string_view n(name);
      if (std::find(names.begin(), names.end(), n) == names.end()) continue;
      out.addresses[std::string(n)] = sym.st_value;
      out.sizes[std::string(n)] = sym.st_size;
    }
  }
}

}  // namespace

Result<symbolize::ElfFile> open_mapped_file(pid_t pid, const MapsEntry& m,
                                            const std::string& proc_root) {
  std::ostringstream map_file;
  map_file << proc_root << "/" << pid << "/map_files/" << std::hex << m.start << "-" << m.end;
  auto elf = symbolize::ElfFile::open(map_file.str());
  if (elf) return elf;
  return symbolize::ElfFile::open(proc_root + "/" + std::to_string(pid) + "/root" + m.path);
}

std::vector<MapsEntry> parse_maps(std::string_view text) {
  std::vector<MapsEntry> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    // start-end perms offset dev inode path
    std::string_view fields[5];
    size_t pos = 0;
    bool ok = true;
    for (auto& f : fields) {
      while (pos < line.size() && line[pos] == ' ') ++pos;
      size_t end = line.find(' ', pos);
      if (end == std::string_view::npos) {
        ok = false;
        break;
      }
      f = line.substr(pos, end - pos);
      pos = end;
    }
    if (!ok) continue;
    while (pos < line.size() && line[pos] == ' ') ++pos;
    std::string_view path = line.substr(pos);
    if (path.empty() || path[0] != '/') continue;
    auto dash = fields[0].find('-');
    auto start = hex_field(fields[0].substr(0, dash));
    auto end =
        dash == std::string_view::npos ? std::nullopt : hex_field(fields[0].substr(dash + 1));
    auto offset = hex_field(fields[2]);
    if (!start || !end || !offset) continue;
    out.push_back({*start, *end, *offset, std::string(path)});
  }
  return out;
}

Result<std::vector<MapsEntry>> read_maps(pid_t pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/maps");
  if (!in) return make_error("process exited");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_maps(ss.str());
}

Result<MappedSymbols> mapped_symbols(pid_t pid, const MapsEntry& m,
                                     const std::vector<std::string>& names,
                                     const std::string& proc_root) {
  auto elf = open_mapped_file(pid, m, proc_root);
  if (!elf) return make_error("cannot read '" + m.path + "': " + elf.error().message);
  auto link_address = elf->address_of_offset(m.offset);
  if (!link_address) return make_error("'" + m.path + "' has no segment at its mapped offset");
  MappedSymbols out;
  out.bias = m.start - *link_address;
  find_symbols(elf->elf(), names, out);
  for (auto& [name, value] : out.addresses) value += out.bias;
  return out;
}

}  // namespace gp::runtime::remote
