// Build-id extraction (libcore/src/elf) against ELF files built by the test tree and checked
// with binutils' readelf, plus corrupt and truncated inputs.

#include <fcntl.h>
#include <gtest/gtest.h>
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

TEST(BuildId, HostileNoteSizesAreRejected) {
  // A minimal 64-bit LE header whose PT_NOTE claims a huge note; then a note with a huge namesz.
  std::string elf(64 + 56 + 32, '\0');
  auto put = [&](size_t off, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) elf[off + i] = static_cast<char>(v >> (8 * i));
  };
  elf.replace(0, 4,
              "\x7f"
              "ELF");
  elf[4] = 2;
  elf[5] = 1;
  put(32, 64, 8);  // e_phoff
  put(54, 56, 2);  // e_phentsize
  put(56, 1, 2);   // e_phnum
  put(64, 4, 4);   // PT_NOTE
  put(64 + 8, 120, 8);
  put(64 + 32, 0xffffffffffffull, 8);  // p_filesz far beyond the file
  EXPECT_FALSE(gp::elf::read_build_id_from_image(elf).ok());
  put(64 + 32, 32, 8);
  put(120, 0xfffffff0u, 4);  // namesz
  put(124, 20, 4);
  put(128, 3, 4);
  EXPECT_FALSE(gp::elf::read_build_id_from_image(elf).ok());
  put(120, 4, 4);  // now a well-formed but short note: desc runs past the end
  elf.replace(132, 4, std::string("GNU\0", 4));
  EXPECT_FALSE(gp::elf::read_build_id_from_image(elf).ok());
  put(124, 8, 4);  // desc fits exactly
  EXPECT_EQ(hex_of(gp::elf::read_build_id_from_image(elf)), "0000000000000000");
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
