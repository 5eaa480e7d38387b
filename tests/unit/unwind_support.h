#pragma once
// Shared helpers of the unwind-table tests: elfutils' CFI API as the oracle (what it says a row
// should be, in gp's terms), table invariants, symbol and section lookups with libelf.

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gp/unwind/table.h"

namespace gp::test::unwind {

using gp::unwind::Row;
using gp::unwind::Rule;
using gp::unwind::Table;

inline bool file_exists(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// An ELF file opened with libelf (and libdw for .debug_frame), closed at scope exit.
class ElfFile {
 public:
  explicit ElfFile(const std::string& path) {
    elf_version(EV_CURRENT);
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
  }
  // An image in memory (not owned).
  ElfFile(const void* image, size_t size) {
    elf_version(EV_CURRENT);
    elf_ = elf_memory(static_cast<char*>(const_cast<void*>(image)), size);
  }
  ~ElfFile() {
    if (eh_cfi_) dwarf_cfi_end(eh_cfi_);
    if (dwarf_) dwarf_end(dwarf_);
    if (elf_) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  int fd() const { return fd_; }
  Elf* elf() const { return elf_; }
  // One handle per file: each dwarf_getcfi_elf call makes a new one (with its own caches).
  Dwarf_CFI* eh_cfi() {
    if (!eh_cfi_ && elf_) eh_cfi_ = dwarf_getcfi_elf(elf_);
    return eh_cfi_;
  }
  Dwarf_CFI* debug_cfi() {
    if (!dwarf_ && elf_) dwarf_ = dwarf_begin_elf(elf_, DWARF_C_READ, nullptr);
    return dwarf_ ? dwarf_getcfi(dwarf_) : nullptr;
  }

  // [address, address + size) of a symbol (.symtab, then .dynsym); nullopt when absent.
  std::optional<std::pair<uint64_t, uint64_t>> symbol(const std::string& name) const {
    for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
        continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      const size_t n = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
      for (size_t i = 0; data && i < n; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
        const char* s = elf_strptr(elf_, shdr.sh_link, sym.st_name);
        if (s && name == s && sym.st_value != 0) return std::make_pair(sym.st_value, sym.st_size);
      }
    }
    return std::nullopt;
  }

  // [address, size) of a section; section_offset: [file offset, size).
  std::optional<std::pair<uint64_t, uint64_t>> section(const std::string& name) const {
    return find_section(name, false);
  }
  std::optional<std::pair<uint64_t, uint64_t>> section_offset(const std::string& name) const {
    return find_section(name, true);
  }

 private:
  std::optional<std::pair<uint64_t, uint64_t>> find_section(const std::string& name,
                                                            bool offset) const {
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf_, &shstrndx) != 0) return std::nullopt;
    for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr)) continue;
      const char* s = elf_strptr(elf_, shstrndx, shdr.sh_name);
      if (s && name == s)
        return std::make_pair(offset ? shdr.sh_offset : shdr.sh_addr, shdr.sh_size);
    }
    return std::nullopt;
  }

 public:
  uint64_t entry() const {
    GElf_Ehdr ehdr;
    return gelf_getehdr(elf_, &ehdr) ? ehdr.e_entry : 0;
  }

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
  Dwarf* dwarf_ = nullptr;
  Dwarf_CFI* eh_cfi_ = nullptr;
};

// The row in force at `address` (binary search); a `none` row before the first.
inline Row row_at(const Table& t, uint64_t address) {
  auto it = std::upper_bound(t.rows.begin(), t.rows.end(), address,
                             [](uint64_t a, const Row& r) { return a < r.address; });
  if (it == t.rows.begin()) return Row{address, Rule::none, 0, 0};
  return *(it - 1);
}

inline std::string describe(const Row& r) {
  std::ostringstream o;
  o << gp::unwind::rule_name(r.rule);
  if (r.rule == Rule::rsp || r.rule == Rule::rbp || r.rule == Rule::plt) {
    o << "+" << r.cfa_offset;
    if (r.rbp_offset) o << " rbp@cfa" << r.rbp_offset;
  }
  if (r.rule == Rule::reg) {
    o << " r" << int{r.cfa_register} << "+" << r.cfa_offset;
    if (r.rbp_offset) o << " rbp@cfa" << r.rbp_offset;
  }
  if (r.rule == Rule::deref_rsp || r.rule == Rule::deref_rbp) {
    o << "[" << r.cfa_offset << "]+" << r.cfa_add;
    if (r.rbp_offset) o << " rbp@cfa" << r.rbp_offset;
  }
  return o.str();
}

// What elfutils says the row at `address` is, reduced with gp's rules. `found` is false when no
// FDE covers the address (or elfutils cannot read the FDE).
struct OracleRow {
  bool found = false;
  Row row;
};

inline bool is_cfa_plus(const Dwarf_Op* ops, size_t n, int64_t& off) {
  if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
    off = static_cast<int64_t>(ops[1].number);
    return true;
  }
  if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
    off = 0;
    return true;
  }
  return false;
}

inline bool is_plt_expression(const Dwarf_Op* ops, size_t n, int64_t& off) {
  static constexpr uint8_t kAtoms[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15,
                                       DW_OP_and,   DW_OP_lit11,  DW_OP_ge,
                                       DW_OP_lit3,  DW_OP_shl,    DW_OP_plus};
  if (n != sizeof(kAtoms) || ops[1].number != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    if (ops[i].atom != kAtoms[i]) return false;
  }
  off = static_cast<int64_t>(ops[0].number);
  return true;
}

// DW_OP_breg7/6 K; DW_OP_deref; [DW_OP_plus_uconst M]: CFA = *(rsp or rbp + K) + M.
inline bool is_deref_expression(const Dwarf_Op* ops, size_t n, Rule& rule, int64_t& off,
                                int64_t& add) {
  if (n < 2 || n > 3 || ops[1].atom != DW_OP_deref) return false;
  if (ops[0].atom != DW_OP_breg7 && ops[0].atom != DW_OP_breg6) return false;
  if (n == 3 && ops[2].atom != DW_OP_plus_uconst) return false;
  rule = ops[0].atom == DW_OP_breg7 ? Rule::deref_rsp : Rule::deref_rbp;
  off = static_cast<int64_t>(ops[0].number);
  add = n == 3 ? static_cast<int64_t>(ops[2].number) : 0;
  return true;
}

inline OracleRow oracle_in(Dwarf_CFI* cfi, uint64_t address) {
  OracleRow out;
  out.row.address = address;
  Dwarf_Frame* frame = nullptr;
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, address, &frame) != 0) return out;
  out.found = true;
  Row& r = out.row;
  r.rule = Rule::unsupported;
  Dwarf_Addr start = 0, end = 0;
  bool signal = false;
  dwarf_frame_info(frame, &start, &end, &signal);
  Dwarf_Op mem[3];
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  int64_t off = 0;
  if (signal) {
    r.rule = Rule::signal;
  } else if (dwarf_frame_register(frame, 16, mem, &ops, &n) == 0 && n == 0 && ops == mem) {
    r.rule = Rule::end;
  } else if (is_cfa_plus(ops, n, off) && off == -8) {
    Dwarf_Op* cfa = nullptr;
    size_t cn = 0;
    int64_t cfa_off = 0;
    bool cfa_ok = dwarf_frame_cfa(frame, &cfa, &cn) == 0;
    Rule rule = Rule::unsupported;
    if (cfa_ok && cn == 1 && cfa[0].atom == DW_OP_bregx && cfa[0].number == 7) rule = Rule::rsp;
    if (cfa_ok && cn == 1 && cfa[0].atom == DW_OP_bregx && cfa[0].number == 6) rule = Rule::rbp;
    uint8_t cfa_reg = 0;
    if (cfa_ok && cn == 1 && cfa[0].atom == DW_OP_bregx && cfa[0].number < 16 &&
        rule == Rule::unsupported) {
      rule = Rule::reg;
      cfa_reg = static_cast<uint8_t>(cfa[0].number);
    }
    if (rule != Rule::unsupported) cfa_off = static_cast<int64_t>(cfa[0].number2);
    if (cfa_ok && is_plt_expression(cfa, cn, cfa_off)) rule = Rule::plt;
    int64_t cfa_add = 0;
    if (cfa_ok) is_deref_expression(cfa, cn, rule, cfa_off, cfa_add);
    int64_t rbp = 0;
    bool rbp_ok = false;
    if (dwarf_frame_register(frame, 6, mem, &ops, &n) == 0) {
      rbp_ok = n == 0 || (is_cfa_plus(ops, n, rbp) && rbp != 0);
    }
    if (rule != Rule::unsupported && rbp_ok) r = Row{address, rule, cfa_off, rbp, cfa_add, cfa_reg};
  }
  free(frame);
  return out;
}

// Both of a file's CFI sources, .eh_frame first (gp prefers it where both cover an address).
inline OracleRow oracle(ElfFile& f, uint64_t address, bool use_debug_frame) {
  OracleRow eh = oracle_in(f.eh_cfi(), address);
  if (eh.found || !use_debug_frame) return eh;
  return oracle_in(f.debug_cfi(), address);
}

// Checks gp's table against elfutils at every row's first byte, its last byte and its middle.
// Returns the number of addresses compared; failures are reported (the first 20).
inline size_t compare_with_elfutils(const Table& t, ElfFile& f) {
  size_t compared = 0;
  size_t mismatches = 0;
  const bool use_debug_frame = t.stats.source != gp::unwind::Source::eh_frame;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    const uint64_t next = i + 1 < t.rows.size() ? t.rows[i + 1].address : r.address + 1;
    for (const uint64_t a : {r.address, r.address + (next - r.address) / 2, next - 1}) {
      const OracleRow want = oracle(f, a, use_debug_frame);
      ++compared;
      Row got = r;
      got.address = a;
      bool same = want.found ? want.row == got : r.rule == Rule::none;
      // elfutils refuses FDEs whose programs it cannot run; gp marks them unsupported.
      if (!want.found && r.rule == Rule::unsupported) same = true;
      if (!same && ++mismatches <= 20) {
        ADD_FAILURE() << std::hex << "at 0x" << a << " (row from 0x" << r.address << "): gp says "
                      << describe(got) << ", elfutils "
                      << (want.found ? describe(want.row) : std::string("no FDE"));
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  return compared;
}

// The contract of Table::rows.
inline void expect_invariants(const Table& t) {
  if (t.rows.empty()) return;
  EXPECT_EQ(t.rows.back().rule, Rule::none);
  for (size_t i = 1; i < t.rows.size(); ++i) {
    const Row& a = t.rows[i - 1];
    const Row& b = t.rows[i];
    ASSERT_LT(a.address, b.address) << "row " << i;
    ASSERT_FALSE(a.rule == b.rule && a.cfa_offset == b.cfa_offset && a.rbp_offset == b.rbp_offset &&
                 a.cfa_add == b.cfa_add && a.cfa_register == b.cfa_register)
        << "rows " << i - 1 << " and " << i << " say the same";
  }
  for (const Row& r : t.rows) {
    const bool deref = r.rule == Rule::deref_rsp || r.rule == Rule::deref_rbp;
    if (r.rule != Rule::rsp && r.rule != Rule::rbp && r.rule != Rule::plt && !deref &&
        r.rule != Rule::reg) {
      ASSERT_EQ(r.cfa_offset, 0);
      ASSERT_EQ(r.rbp_offset, 0);
    }
    if (!deref) {
      ASSERT_EQ(r.cfa_add, 0);
    }
    if (r.rule != Rule::reg) {
      ASSERT_EQ(r.cfa_register, 0);
    }
  }
}

inline size_t count_rule(const Table& t, Rule rule) {
  return static_cast<size_t>(
      std::count_if(t.rows.begin(), t.rows.end(), [&](const Row& r) { return r.rule == rule; }));
}

}  // namespace gp::test::unwind
