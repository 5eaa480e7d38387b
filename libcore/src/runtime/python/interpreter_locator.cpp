// Locating _PyRuntime in a live process (see interpreter_locator.h).
#include "runtime/python/interpreter_locator.h"

#include <gelf.h>
#include <libelf.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

#include "gp/symbolize/elf_file.h"

namespace gp::runtime::python {
namespace {

std::optional<uint64_t> hex_field(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool is_libpython(std::string_view path) {
  auto slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with("libpython");
}

struct Symbols {
  std::optional<uint64_t> runtime, code_type, py_version;
};

// Values of the wanted symbols, from .symtab and .dynsym (whichever the file has).
Symbols find_symbols(Elf* elf) {
  Symbols out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || sh.sh_entsize == 0) continue;
    size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name == nullptr || name[0] == '\0') continue;
      std::string_view n(name);
      if (n == "_PyRuntime") out.runtime = sym.st_value;
      else if (n == "PyCode_Type") out.code_type = sym.st_value;
      else if (n == "Py_Version") out.py_version = sym.st_value;
    }
  }
  return out;
}

Result<symbolize::ElfFile> open_mapped_file(pid_t pid, const MapsEntry& m,
                                            const std::string& proc_root) {
  std::ostringstream map_file;
  map_file << proc_root << "/" << pid << "/map_files/" << std::hex << m.start << "-" << m.end;
  auto elf = symbolize::ElfFile::open(map_file.str());
  if (elf) return elf;
  return symbolize::ElfFile::open(proc_root + "/" + std::to_string(pid) + "/root" + m.path);
}

Result<std::string> read_maps(pid_t pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/maps");
  if (!in) return make_error("process exited");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

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

const MapsEntry* pick_interpreter_mapping(const std::vector<MapsEntry>& maps) {
  const MapsEntry* lib = nullptr;
  const MapsEntry* exe = nullptr;
  for (const auto& m : maps) {
    if (m.path.ends_with(" (deleted)")
            ? !is_interpreter_file_name(m.path.substr(0, m.path.size() - 10))
            : !is_interpreter_file_name(m.path)) {
      continue;
    }
    const MapsEntry*& slot = is_libpython(m.path) ? lib : exe;
    if (slot == nullptr || m.start < slot->start) slot = &m;
  }
  return lib != nullptr ? lib : exe;
}

Result<InterpreterInfo> locate_interpreter(pid_t pid, RemoteMemory& memory,
                                           const std::string& proc_root) {
  auto text = read_maps(pid, proc_root);
  if (!text) return text.error();
  auto maps = parse_maps(*text);
  const MapsEntry* m = pick_interpreter_mapping(maps);
  if (m == nullptr) return make_error("no python executable or libpython is mapped");
  auto elf = open_mapped_file(pid, *m, proc_root);
  if (!elf) return make_error("cannot read '" + m->path + "': " + elf.error().message);
  auto link_address = elf->address_of_offset(m->offset);
  if (!link_address) return make_error("'" + m->path + "' has no segment at its mapped offset");
  Symbols syms = find_symbols(elf->elf());
  if (!syms.runtime) {
    return make_error("'" + m->path + "' has no _PyRuntime symbol (not CPython 3.7+, or stripped)");
  }
  InterpreterInfo info;
  info.path = m->path;
  info.bias = m->start - *link_address;
  info.runtime_address = *syms.runtime + info.bias;
  info.code_type_address = syms.code_type ? *syms.code_type + info.bias : 0;
  uint32_t hex = 0;
  if (syms.py_version && memory.read_value(*syms.py_version + info.bias, hex)) {
    if (auto v = version_from_hex(hex)) info.version = *v, info.version_known = true;
  }
  if (!info.version_known) {
    if (auto v = version_from_file_name(m->path)) info.version = *v, info.version_known = true;
  }
  return info;
}

}  // namespace gp::runtime::python
