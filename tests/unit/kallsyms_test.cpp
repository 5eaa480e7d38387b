// KallsymsTable on the real /proc/kallsyms and on synthetic tables.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "gp/proc/kallsyms.h"

namespace gp::test::proc {
namespace {

using gp::proc::KallsymsTable;

const char* kSample =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000100 t helper_b\n"
    "ffffffff81000040 T func_a\n"
    "ffffffff81000040 t func_a_alias\n"
    "ffffffff81000080 D some_data\n"  // data: never ends a function
    "ffffffff81000200 W weak_fn\n"
    "not a line\n"
    "ffffffffc0001000 t mod_fn\t[e1000]\n"
    "ffffffffc0001080 T mod_fn2\t[e1000]\n"
    "ffffffffc0002000 t bpf_prog_6deef7357e7b4530_probe\t[bpf]\n";

TEST(Kallsyms, ParsesSortsAndKeepsCodeSymbolsWithModules) {
  auto t = KallsymsTable::parse(kSample);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 8u);
  EXPECT_EQ(t->symbols()[0].name, "_stext");
  EXPECT_EQ(t->symbols()[1].name, "func_a");
  EXPECT_EQ(t->symbols()[2].name, "func_a_alias");
  EXPECT_EQ(t->symbols()[5].module, "e1000");
  EXPECT_EQ(t->symbols()[5].type, 't');
  EXPECT_EQ(t->symbols()[7].module, "bpf");
}

TEST(Kallsyms, LooksUpTheContainingSymbol) {
  auto t = KallsymsTable::parse(kSample);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->lookup(0xffffffff80ffffff), nullptr);
  EXPECT_EQ(t->lookup(0xffffffff81000000)->name, "_stext");
  EXPECT_EQ(t->lookup(0xffffffff8100003f)->name, "_stext");
  EXPECT_EQ(t->lookup(0xffffffff81000040)->name, "func_a");  // first alias in file order
  EXPECT_EQ(t->lookup(0xffffffff810000a0)->name, "func_a");  // data symbol skipped
  EXPECT_EQ(t->lookup(0xffffffff81000150)->name, "helper_b");
  EXPECT_EQ(t->lookup(0xffffffffc0001090)->name, "mod_fn2");
  EXPECT_EQ(t->lookup(0xffffffffc0001090)->module, "e1000");
  EXPECT_EQ(t->lookup(0xffffffffc0002010)->name, "bpf_prog_6deef7357e7b4530_probe");
  // Past the last symbol only a bounded distance is attributed to it.
  EXPECT_EQ(t->lookup(0xffffffffc0002000 + KallsymsTable::kMaxLastSymbolSize), nullptr);
}

TEST(Kallsyms, CoveringGivesEachSymbolAndItsSuccessor) {
  auto t = KallsymsTable::parse(kSample);
  ASSERT_TRUE(t.ok());
  const auto sub = t->covering({0xffffffff81000050, 0xffffffff81000060, 0xffffffffc0001001, 0x10});
  std::vector<std::string> names;
  for (const auto& s : sub) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"func_a", "helper_b", "mod_fn", "mod_fn2"}));
  // Symbolizing with only the subset gives the same answers for those addresses.
  std::string text;
  for (const auto& s : sub) {
    char line[256];
    std::snprintf(line, sizeof line, "%016llx %c %s\n", static_cast<unsigned long long>(s.address),
                  s.type, s.name.c_str());
    text += line;
  }
  auto small = KallsymsTable::parse(text);
  ASSERT_TRUE(small.ok());
  for (uint64_t a : {0xffffffff81000050ull, 0xffffffffc0001001ull})
    EXPECT_EQ(small->lookup(a)->name, t->lookup(a)->name);
  EXPECT_TRUE(t->covering({}).empty());
}

// The same symbols, fields and order as parse() + covering(), without the whole table; the
// same errors too.
TEST(Kallsyms, CoveringInTextMatchesTheTable) {
  auto t = KallsymsTable::parse(kSample);
  ASSERT_TRUE(t.ok());
  const std::vector<uint64_t> addresses = {0xffffffff81000050, 0xffffffff81000000,
                                           0xffffffff81000250, 0xffffffffc0001001,
                                           0xffffffffc0002010, 0x10};
  const auto want = t->covering(addresses);
  auto got = KallsymsTable::covering_in(kSample, addresses);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*got)[i].address, want[i].address) << i;
    EXPECT_EQ((*got)[i].name, want[i].name) << i;
    EXPECT_EQ((*got)[i].module, want[i].module) << i;
    EXPECT_EQ((*got)[i].type, want[i].type) << i;
  }
  EXPECT_EQ((*got)[0].name, "_stext");
  EXPECT_EQ((*got)[1].name, "func_a");  // the first alias in file order, as lookup() gives
  EXPECT_EQ(KallsymsTable::covering_in("hello\nworld\n", addresses).error().message,
            "no kernel symbols found");
  auto hidden = KallsymsTable::covering_in("0000000000000000 T _stext\n", addresses);
  ASSERT_FALSE(hidden.ok());
  EXPECT_NE(hidden.error().message.find("kptr_restrict"), std::string::npos);
  // A saved copy on disk (mapped) gives the same.
  char path[] = "/tmp/gp-kallsyms-test.XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, kSample, std::strlen(kSample)), static_cast<ssize_t>(std::strlen(kSample)));
  ::close(fd);
  auto from_file = KallsymsTable::covering_in_file(path, addresses);
  ::unlink(path);
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  EXPECT_EQ(from_file->size(), want.size());
  EXPECT_FALSE(KallsymsTable::covering_in_file("/nonexistent/kallsyms", addresses).ok());
}

TEST(Kallsyms, RefusesHiddenAddresses) {
  auto t = KallsymsTable::parse("0000000000000000 T _stext\n0000000000000000 t foo\t[mod]\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("kptr_restrict"), std::string::npos) << t.error().message;
  auto junk = KallsymsTable::parse("hello\nworld\n");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().message, "no kernel symbols found");
  auto missing = KallsymsTable::load("/nonexistent/kallsyms");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
}

TEST(Kallsyms, LoadsTheRunningKernelsTable) {
  if (::geteuid() != 0) GTEST_SKIP() << "kernel addresses are only visible to root";
  std::ifstream in("/proc/kallsyms");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // Find schedule()'s address ourselves.
  const size_t at = text.find(" T schedule\n");
  ASSERT_NE(at, std::string::npos);
  const uint64_t addr = std::stoull(
      text.substr(text.rfind('\n', at) + 1, at - text.rfind('\n', at) - 1), nullptr, 16);
  auto t = KallsymsTable::load();
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_GT(t->size(), 10000u);
  ASSERT_NE(t->lookup(addr + 4), nullptr);
  EXPECT_EQ(t->lookup(addr + 4)->name, "schedule");
  const auto sub = t->covering({addr + 4});
  ASSERT_EQ(sub.size(), 2u);
  EXPECT_EQ(sub[0].name, "schedule");
  EXPECT_GT(sub[1].address, addr);
}

}  // namespace
}  // namespace gp::test::proc
