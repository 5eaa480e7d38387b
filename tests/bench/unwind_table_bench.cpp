// Times gp's unwind-table builder (gp::unwind::build_packed, what gp-record does for each
// binary it has not cached) against elfutils building the same table with its CFI API (every row
// of every FDE through dwarf_cfi_addrframe), on the files given. Prints one line per file:
//   file  gp_ms  first_ms  gp_cpu_ms  elfutils_ms  elfutils_cpu_ms  fdes  rows_raw  rows
//   packed_rows  pages  packed_bytes  eu_rows  same
// Times are the median of N runs (default 11), file open and close included; first_ms is gp's
// first run in the process. `same`: build_packed's table is the one pack(build_table) gives
// (the two paths share the CFI parser and the packer; a NO fails the bench).
//   unwind_table_bench [-n N] FILE...

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "gp/unwind/table.h"

namespace {

using Clock = std::chrono::steady_clock;

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct GpFigures {
  double ms = 0;
  double cpu = 0;
  double first_ms = 0;  // the first run: nothing of it in this process's caches yet
  bool same = false;    // build_packed gave what pack(build_table) gives
  gp::unwind::Table table;
  gp::unwind::PackedTable packed;
};

bool same_packed(const gp::unwind::PackedTable& a, const gp::unwind::PackedTable& b) {
  auto eq = [](const auto& x, const auto& y) {
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  return a.base == b.base && eq(a.rows, b.rows) && eq(a.pages, b.pages) && eq(a.rules, b.rules);
}

bool time_gp(const char* path, int runs, GpFigures& out) {
  std::vector<double> times;
  std::vector<double> cpu;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    auto packed = gp::unwind::build_packed(fd);
    ::close(fd);
    times.push_back(ms_since(t0));
    cpu.push_back(cpu_ms() - c0);
    if (!packed) {
      std::fprintf(stderr, "unwind_table_bench: error: '%s': %s\n", path,
                   packed.error().message.c_str());
      return false;
    }
    out.packed = std::move(*packed);
  }
  out.first_ms = times.front();
  out.ms = median(times);
  out.cpu = median(cpu);
  // The table's sizes, and the check that the packed table is the one the Table packs into.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  auto table = gp::unwind::build_table(fd);
  ::close(fd);
  if (!table) return false;
  auto packed = gp::unwind::pack(*table);
  out.same = packed && same_packed(*packed, out.packed);
  out.table = std::move(*table);
  return true;
}

// Every row of every FDE through elfutils: the same table, computed by the reference.
size_t elfutils_rows(Elf* elf) {
  Dwarf_CFI* cfi = dwarf_getcfi_elf(elf);
  if (cfi == nullptr) return 0;
  size_t rows = 0;
  Dwarf_Off off = 0;
  Dwarf_Off next = 0;
  Dwarf_CFI_Entry entry;
  GElf_Ehdr ehdr;
  gelf_getehdr(elf, &ehdr);
  Elf_Data* data = nullptr;
  GElf_Shdr shdr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && !data; scn = elf_nextscn(elf, scn)) {
    gelf_getshdr(scn, &shdr);
    const char* name = elf_strptr(elf, ehdr.e_shstrndx, shdr.sh_name);
    if (name && std::strcmp(name, ".eh_frame") == 0) data = elf_getdata(scn, nullptr);
  }
  if (data == nullptr) return 0;
  const auto* begin = static_cast<const uint8_t*>(data->d_buf);
  while (dwarf_next_cfi(ehdr.e_ident, data, true, off, &next, &entry) == 0) {
    off = next;
    if (dwarf_cfi_cie_p(&entry)) continue;
    Dwarf_Frame* frame = nullptr;
    Dwarf_Addr start = 0, end = 0;
    bool signal = false;
    // entry.fde.start points at the encoded initial location and range: pcrel sdata4 and
    // udata4, what GCC and binutils emit on x86-64.
    int32_t rel = 0;
    std::memcpy(&rel, entry.fde.start, sizeof rel);
    Dwarf_Addr pc = shdr.sh_addr + static_cast<Dwarf_Addr>(entry.fde.start - begin) +
                    static_cast<Dwarf_Addr>(static_cast<int64_t>(rel));
    uint32_t len = 0;
    std::memcpy(&len, entry.fde.start + 4, sizeof len);
    const Dwarf_Addr fde_end = pc + len;
    while (pc < fde_end && dwarf_cfi_addrframe(cfi, pc, &frame) == 0) {
      dwarf_frame_info(frame, &start, &end, &signal);
      Dwarf_Op* ops = nullptr;
      size_t nops = 0;
      dwarf_frame_cfa(frame, &ops, &nops);
      Dwarf_Op mem[3];
      dwarf_frame_register(frame, 6, mem, &ops, &nops);
      dwarf_frame_register(frame, 16, mem, &ops, &nops);
      free(frame);
      ++rows;
      if (end <= pc) break;
      pc = end;
    }
  }
  return rows;
}

bool time_elfutils(const char* path, int runs, double& ms, double& cpu_time, size_t& rows) {
  std::vector<double> times;
  std::vector<double> cpu;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    rows = elfutils_rows(elf);
    elf_end(elf);
    ::close(fd);
    times.push_back(ms_since(t0));
    cpu.push_back(cpu_ms() - c0);
  }
  ms = median(times);
  cpu_time = median(cpu);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 11;
  int first = 1;
  if (argc > 2 && std::strcmp(argv[1], "-n") == 0) {
    runs = std::max(1, std::atoi(argv[2]));
    first = 3;
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: unwind_table_bench [-n N] FILE...\n");
    return 2;
  }
  elf_version(EV_CURRENT);
  std::printf("%-38s %7s %8s %9s %11s %15s %6s %8s %7s %7s %5s %8s %8s %4s\n", "file", "gp_ms",
              "first_ms", "gp_cpu_ms", "elfutils_ms", "elfutils_cpu_ms", "fdes", "rows_raw", "rows",
              "packed", "pages", "bytes", "eu_rows", "same");
  int status = 0;
  for (int i = first; i < argc; ++i) {
    GpFigures gp;
    double eu_ms = 0;
    double eu_cpu = 0;
    size_t eu_rows = 0;
    if (!time_gp(argv[i], runs, gp) ||
        !time_elfutils(argv[i], std::max(1, runs / 4), eu_ms, eu_cpu, eu_rows)) {
      status = 1;
      continue;
    }
    const size_t bytes = gp.packed.rows.size() * sizeof(gp::unwind::PackedRow) +
                         gp.packed.pages.size() * sizeof(gp::unwind::PackedPage) +
                         gp.packed.rules.size() * sizeof(gp::unwind::PackedRule);
    std::printf("%-38s %7.2f %8.2f %9.2f %11.2f %15.2f %6llu %8llu %7zu %7zu %5zu %8zu %8zu %4s\n",
                argv[i], gp.ms, gp.first_ms, gp.cpu, eu_ms, eu_cpu,
                static_cast<unsigned long long>(gp.table.stats.fdes),
                static_cast<unsigned long long>(gp.table.stats.rows_raw), gp.table.rows.size(),
                gp.packed.rows.size(), gp.packed.pages.size(), bytes, eu_rows,
                gp.same ? "yes" : "NO");
    if (!gp.same) status = 1;
  }
  return status;
}
