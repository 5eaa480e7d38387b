// Build-id extraction (libcore/src/elf) against ELF files built by the test tree and checked
// with binutils' readelf, plus corrupt and truncated inputs.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gp/elf/build_id.h"
#include "proc_test_support.h"

namespace gp::test::elf {
namespace {

using gp::elf::build_id_hex;
using gp::elf::read_build_id;

std::string fixture(const std::string& name) { return std::string(GP_ELF_FIXTURES) + "/" + name; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string write_temp(const std::string& bytes) {
  char name[] = "/tmp/gp-buildid-XXXXXX";
  const int fd = ::mkstemp(name);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  return name;
}

std::string hex_of(const Result<std::string>& r) {
  return r ? build_id_hex(*r) : "error: " + r.error().message;
}

TEST(BuildId, ReadsPinnedBuildIdOfExecutable) {
  EXPECT_EQ(hex_of(read_build_id(std::string(GP_FIXTURE_EXE))), GP_FIXTURE_EXE_BUILD_ID);
  EXPECT_EQ(readelf_build_id(GP_FIXTURE_EXE), GP_FIXTURE_EXE_BUILD_ID);
}

TEST(BuildId, ReadsPinnedBuildIdOfSharedLibrary) {
  EXPECT_EQ(hex_of(read_build_id(std::string(GP_FIXTURE_LIB))), GP_FIXTURE_LIB_BUILD_ID);
}

TEST(BuildId, StrippedAndDebugOnlyCopiesKeepTheBuildId) {
  for (const char* name : {"buildid_stripped", "buildid.debug"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(hex_of(read_build_id(fixture(name))), GP_FIXTURE_EXE_BUILD_ID);
    EXPECT_EQ(readelf_build_id(fixture(name)), GP_FIXTURE_EXE_BUILD_ID);
  }
}

TEST(BuildId, FallsBackToSectionHeadersWithoutProgramHeaders) {
  EXPECT_EQ(hex_of(read_build_id(fixture("buildid_note.o"))), "0102030405060708");
  EXPECT_EQ(readelf_build_id(fixture("buildid_note.o")), "0102030405060708");
}

TEST(BuildId, ReadsOtherClassesAndByteOrders) {
  // 32-bit little-endian, 64-bit big-endian, 32-bit big-endian, and another 64-bit LE machine.
  for (const char* name :
       {"buildid_i386", "buildid_ppc64be", "buildid_mips32be", "buildid_aarch64"}) {
    SCOPED_TRACE(name);
    if (::access(fixture(name).c_str(), R_OK) != 0) {
      GTEST_SKIP() << "fixture " << name
                   << " not built: clang or ld.lld was not found at configure time";
    }
    const std::string expected = readelf_build_id(fixture(name));
    ASSERT_EQ(expected.size(), 16u);
    EXPECT_EQ(hex_of(read_build_id(fixture(name))), expected);
  }
}

TEST(BuildId, FdOverloadLeavesTheOffsetAlone) {
  const int fd = ::open(GP_FIXTURE_EXE, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::lseek(fd, 7, SEEK_SET), 7);
  EXPECT_EQ(hex_of(read_build_id(fd)), GP_FIXTURE_EXE_BUILD_ID);
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 7);
  ::close(fd);
}

TEST(BuildId, RejectsWhatIsNotAnElfFile) {
  const std::string text =
      write_temp("#!/bin/sh\necho not an elf file at all, but long enough to parse\n");
  auto r = read_build_id(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not an ELF file"), std::string::npos) << r.error().message;
  ::unlink(text.c_str());
  EXPECT_FALSE(read_build_id(std::string("/dev/null")).ok());
  EXPECT_FALSE(read_build_id(std::string("/tmp")).ok());
  auto missing = read_build_id(std::string("/nonexistent/gp/file"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "No such file or directory");
}

TEST(BuildId, TruncatedFilesGiveAnErrorOrTheRightId) {
  const std::string full = slurp(GP_FIXTURE_EXE);
  ASSERT_GT(full.size(), 1000u);
  size_t errors = 0;
  for (size_t len = 0; len < full.size(); len += (len < 2048 ? 1 : 97)) {
    auto r = gp::elf::read_build_id_from_image(std::string_view(full).substr(0, len));
    if (!r) {
      ++errors;
      continue;
    }
    EXPECT_EQ(build_id_hex(*r), GP_FIXTURE_EXE_BUILD_ID) << "prefix of " << len << " bytes";
  }
  EXPECT_GT(errors, 50u);  // short prefixes cannot hold the note
  const std::string cut = write_temp(full.substr(0, 40));
  EXPECT_FALSE(read_build_id(cut).ok());
  ::unlink(cut.c_str());
}

TEST(BuildId, CorruptHeadersNeverReadOutOfBounds) {
  const std::string full = slurp(GP_FIXTURE_EXE);
  std::mt19937 rng(12345);
  // Flip bytes in the ELF header, the program headers and the first notes: every result must be
  // an error or a non-empty id (AddressSanitizer builds catch any over-read).
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % 1024] = static_cast<char>(rng());
    auto r = gp::elf::read_build_id_from_image(bytes);
    if (r) {
      EXPECT_FALSE(r->empty());
    }
  }
}

// A minimal 64-bit little-endian ELF file: the header, one PT_NOTE program header for
// [note_offset, note_offset + note_size), and `notes` placed at note_offset.
struct TinyElf {
  std::string bytes;
  void put(size_t off, uint64_t v, int n) {
    if (bytes.size() < off + n) bytes.resize(off + n, '\0');
    for (int i = 0; i < n; ++i) bytes[off + i] = static_cast<char>(v >> (8 * i));
  }
  TinyElf(uint64_t note_offset, uint64_t note_size, const std::string& notes) {
    bytes.assign(64 + 56, '\0');
    bytes.replace(0, 4,
                  "\x7f"
                  "ELF");
    bytes[4] = 2;    // ELFCLASS64
    bytes[5] = 1;    // ELFDATA2LSB
    bytes[6] = 1;    // EV_CURRENT
    put(32, 64, 8);  // e_phoff
    put(52, 64, 2);  // e_ehsize
    put(54, 56, 2);  // e_phentsize
    put(56, 1, 2);   // e_phnum
    put(64, 4, 4);   // PT_NOTE
    put(64 + 8, note_offset, 8);
    put(64 + 32, note_size, 8);  // p_filesz
    put(64 + 48, 4, 8);          // p_align
    if (bytes.size() < note_offset) bytes.resize(note_offset, '\0');
    bytes.replace(note_offset, notes.size(), notes);
  }
};

std::string note(uint32_t namesz, uint32_t descsz, uint32_t type, std::string name,
                 std::string desc) {
  std::string out;
  for (uint32_t v : {namesz, descsz, type}) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  }
  name.resize((name.size() + 3) / 4 * 4, '\0');
  desc.resize((desc.size() + 3) / 4 * 4, '\0');
  return out + name + desc;
}

const std::string kGnu("GNU\0", 4);

// What a user of the reader sees for an image and for the same bytes as a file.
std::string both_ways(const std::string& bytes) {
  const std::string from_image = hex_of(gp::elf::read_build_id_from_image(bytes));
  const std::string path = write_temp(bytes);
  const std::string from_file = hex_of(read_build_id(path));
  ::unlink(path.c_str());
  EXPECT_EQ(from_image, from_file);
  return from_file;
}

TEST(BuildId, HostileNoteSizesAreRejected) {
  const std::string good = note(4, 8, 3, kGnu, "\x01\x02\x03\x04\x05\x06\x07\x08");
  EXPECT_EQ(both_ways(TinyElf(120, good.size(), good).bytes), "0102030405060708");
  // The PT_NOTE claims far more than the file holds.
  EXPECT_EQ(both_ways(TinyElf(120, 0xffffffffffffull, good).bytes), "error: no GNU build-id note");
  // A note whose namesz, or descsz, runs past its region ends the walk: the GNU note behind it
  // is not reached (nothing past the region is read).
  for (auto hostile :
       {note(0xfffffff0u, 4, 1, "ABC", "xxxx"), note(4, 0xfffffff0u, 1, "ABC", "x")}) {
    const std::string notes = hostile + good;
    EXPECT_EQ(both_ways(TinyElf(120, notes.size(), notes).bytes), "error: no GNU build-id note");
  }
  // A GNU note whose desc runs past the end of the region.
  const std::string short_desc = note(4, 64, 3, kGnu, "\x01\x02");
  EXPECT_EQ(both_ways(TinyElf(120, short_desc.size(), short_desc).bytes),
            "error: no GNU build-id note");
}

TEST(BuildId, MisalignedNoteRegionsAreReadAsTheyAre) {
  // A region at an odd offset, after an unrelated note.
  const std::string notes =
      note(6, 2, 1, "Linux", "ab") + note(4, 5, 3, kGnu, "\x01\x02\x03\x04\x05");
  EXPECT_EQ(both_ways(TinyElf(123, notes.size(), notes).bytes), "0102030405");
  // A region that ends inside a note header.
  EXPECT_EQ(both_ways(TinyElf(123, notes.size() - 9, notes).bytes), "error: no GNU build-id note");
}

TEST(BuildId, HostileHeaderCountsCostNoMemory) {
  // Extended numbering: e_shnum 0 and e_phnum PN_XNUM say "see section header 0", whose
  // sh_size and sh_info claim 2^20 section and program headers in a 248-byte file (libelf would
  // set up a table of ~200 MiB for them).
  TinyElf elf(120, 0, "");
  elf.put(40, 184, 8);             // e_shoff
  elf.put(56, 0xffff, 2);          // e_phnum = PN_XNUM
  elf.put(58, 64, 2);              // e_shentsize
  elf.put(60, 0, 2);               // e_shnum = 0
  elf.put(184 + 32, 1u << 20, 8);  // sh_size: the section count
  elf.put(184 + 44, 1u << 20, 4);  // sh_info: the program header count
  elf.bytes.resize(248, '\0');
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  const std::string path = write_temp(elf.bytes);
  auto r = read_build_id(path);
  ::unlink(path.c_str());
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "no GNU build-id note");
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "KiB of peak memory for 248 bytes";
  EXPECT_FALSE(gp::elf::read_build_id_from_image(elf.bytes).ok());
}

TEST(BuildIdNotes, FindsTheGnuNoteAmongOthersInBothByteOrders) {
  auto note = [](bool big, uint32_t namesz, uint32_t descsz, uint32_t type, std::string name,
                 std::string desc) {
    std::string out;
    for (uint32_t v : {namesz, descsz, type}) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * (big ? 3 - i : i))));
    }
    name.resize((name.size() + 3) / 4 * 4, '\0');
    desc.resize((desc.size() + 3) / 4 * 4, '\0');
    return out + name + desc;
  };
  for (bool big : {false, true}) {
    const std::string blob = note(big, 6, 2, 1, "Linux", "ab") + note(big, 4, 3, 3, "XYZ", "bad") +
                             note(big, 4, 5, 3, std::string("GNU\0", 4), "\x01\x02\x03\x04\x05");
    EXPECT_EQ(build_id_hex(gp::elf::find_build_id_in_notes(blob, big)), "0102030405") << big;
    EXPECT_EQ(gp::elf::find_build_id_in_notes(blob.substr(0, blob.size() - 4), big), "") << big;
  }
  EXPECT_EQ(build_id_hex(std::string("\x00\xff\x10", 3)), "00ff10");
  EXPECT_EQ(build_id_hex(""), "");
}

}  // namespace
}  // namespace gp::test::elf
