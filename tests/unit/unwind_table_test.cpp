// The special rows of real binaries: libc's sigreturn trampoline is `signal`, entry points and
// clone's child are `end`, PLT entries are `plt`; an image in memory gives the file's table;
// files gp cannot use are refused with a reason.

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <fstream>
#include <iterator>
#include <string>

#include "unwind_support.h"

namespace gp::test::unwind {
namespace {

constexpr const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";

Table build(const std::string& path) {
  ElfFile f(path);
  auto t = gp::unwind::build_table(f.fd());
  EXPECT_TRUE(t.ok()) << path << ": " << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : Table{};
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

struct LoadedLibc {
  std::string path;
  uint64_t bias = 0;
};

int find_libc(dl_phdr_info* info, size_t, void* arg) {
  auto* out = static_cast<LoadedLibc*>(arg);
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  if (name.find("/libc.so.6") == std::string::npos) return 0;
  out->path = name;
  out->bias = info->dlpi_addr;
  return 1;
}

// The kernel's record of glibc's SA_RESTORER trampoline (__restore_rt, not in .dynsym) for a
// handler installed through glibc, as an ELF address of the libc this process runs.
TEST(UnwindTable, LibcRestoreRtIsSignal) {
  if (!file_exists(kLibc)) GTEST_SKIP() << kLibc << " is not installed";
  LoadedLibc libc;
  dl_iterate_phdr(find_libc, &libc);
  if (libc.path.empty() || !same_file(libc.path, kLibc)) {
    GTEST_SKIP() << "this process does not run " << kLibc;
  }
  struct sigaction act {};
  act.sa_handler = [](int) {};
  ASSERT_EQ(sigaction(SIGUSR2, &act, nullptr), 0);
  struct KernelSigaction {
    void* handler;
    unsigned long flags;
    void* restorer;
    uint64_t mask;
  } k{};
  ASSERT_EQ(syscall(SYS_rt_sigaction, SIGUSR2, nullptr, &k, sizeof(k.mask)), 0);
  signal(SIGUSR2, SIG_DFL);
  ASSERT_NE(k.restorer, nullptr);
  const uint64_t restore_rt = reinterpret_cast<uint64_t>(k.restorer) - libc.bias;

  const Table t = build(kLibc);
  EXPECT_EQ(row_at(t, restore_rt).rule, Rule::signal);
  // glibc starts the FDE one byte early, so that a lookup of pc - 1 finds it too.
  EXPECT_EQ(row_at(t, restore_rt - 1).rule, Rule::signal);
  EXPECT_EQ(count_rule(t, Rule::signal), 1u) << "libc has one sigreturn trampoline";
}

TEST(UnwindTable, EntryPointIsEnd) {
  for (const std::string path :
       {"/usr/bin/xz", "/usr/bin/python3.11", GP_UNWIND_EH_FRAME_FIXTURE}) {
    if (!file_exists(path)) continue;
    ElfFile f(path);
    const Table t = build(path);
    EXPECT_EQ(row_at(t, f.entry()).rule, Rule::end) << path << ": _start";
    EXPECT_EQ(row_at(t, f.entry() + 4).rule, Rule::end) << path << ": _start";
  }
}

// clone's child starts with cfi_undefined rip: the outermost frame of every thread.
TEST(UnwindTable, LibcCloneChildIsEnd) {
  if (!file_exists(kLibc)) GTEST_SKIP() << kLibc << " is not installed";
  ElfFile f(kLibc);
  const auto clone = f.symbol("clone");
  ASSERT_TRUE(clone);
  const Table t = build(kLibc);
  size_t ends = 0;
  for (const Row& r : t.rows) {
    if (r.address >= clone->first && r.address < clone->first + clone->second) {
      ends += r.rule == Rule::end;
    }
  }
  EXPECT_EQ(row_at(t, clone->first).rule, Rule::rsp);
  EXPECT_EQ(ends, 1u);
}

// ld's lazy PLT: PLT0 pushes twice (rsp+16, rsp+24), every later entry is one expression.
TEST(UnwindTable, PltEntriesArePlt) {
  for (const std::string path : {kLibc, "/usr/bin/xz", GP_UNWIND_EH_FRAME_FIXTURE}) {
    if (!file_exists(path)) continue;
    ElfFile f(path);
    const auto plt = f.section(".plt");
    ASSERT_TRUE(plt) << path;
    ASSERT_GE(plt->second, 32u) << path;
    const Table t = build(path);
    EXPECT_EQ(describe(row_at(t, plt->first)), "rsp+16") << path;
    EXPECT_EQ(describe(row_at(t, plt->first + 6)), "rsp+24") << path;
    for (uint64_t a = plt->first + 16; a < plt->first + plt->second; a += 5) {
      ASSERT_EQ(describe(row_at(t, a)), "plt+8") << path << std::hex << " at 0x" << a;
    }
  }
}

TEST(UnwindTable, ImageInMemoryGivesTheFilesTable) {
  const std::string path = GP_UNWIND_EH_FRAME_FIXTURE;
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(bytes.empty());
  auto from_image = gp::unwind::build_table(std::span<const uint8_t>(bytes));
  ASSERT_TRUE(from_image.ok()) << from_image.error().message;
  const Table from_file = build(path);
  EXPECT_FALSE(from_file.rows.empty());
  EXPECT_EQ(from_image->rows, from_file.rows);
}

TEST(UnwindTable, StatsCountTheFdes) {
  const Table t = build(GP_UNWIND_EH_FRAME_FIXTURE);
  // _start, PLT, .plt.got/.plt.sec (maybe), leaf, pushes, with_vla, recurse, main, and crt's.
  EXPECT_GE(t.stats.fdes, 6u);
  EXPECT_GE(t.stats.cies, 1u);
  EXPECT_GE(t.stats.rows_raw, t.rows.size());
  EXPECT_EQ(t.stats.fdes_unsupported, 0u);
}

TEST(UnwindTable, RefusesFilesItCannotUse) {
  char name[] = "/tmp/gp-unwind-XXXXXX";
  const int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "not an ELF file\n", 16), 16);
  auto t = gp::unwind::build_table(fd);
  ::close(fd);
  ::unlink(name);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("not an ELF"), std::string::npos) << t.error().message;

  const std::string arm = std::string(GP_ELF_FIXTURES) + "/buildid_aarch64";
  if (file_exists(arm)) {
    ElfFile f(arm);
    auto a = gp::unwind::build_table(f.fd());
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().message.find("x86-64"), std::string::npos) << a.error().message;
  }
  auto bad_fd = gp::unwind::build_table(-1);
  EXPECT_FALSE(bad_fd.ok());
  auto empty = gp::unwind::build_table(std::span<const uint8_t>());
  EXPECT_FALSE(empty.ok());
}

}  // namespace
}  // namespace gp::test::unwind
