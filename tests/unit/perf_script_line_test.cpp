// perf script line parsing: sample headers and frame lines exactly as perf prints them.

#include <gtest/gtest.h>

#include "gp/import/perf_line.h"

namespace gp::test::import {
namespace {

using gp::import::parse_frame_line;
using gp::import::parse_header_comment;
using gp::import::parse_sample_header;
using gp::import::PerfFrame;
using gp::import::PerfSampleHeader;
using gp::import::strip_symbol_offset;

PerfSampleHeader header(std::string_view line) {
  PerfSampleHeader h;
  EXPECT_TRUE(parse_sample_header(line, h)) << line;
  return h;
}

PerfFrame frame(std::string_view line) {
  PerfFrame f;
  EXPECT_TRUE(parse_frame_line(line, f)) << line;
  return f;
}

TEST(PerfSampleHeader, ParsesSystemWideDefaultFields) {
  auto h = header("swapper     0 [000]   776.613664:   10101010 cpu-clock:ppp: ");
  EXPECT_EQ(h.comm, "swapper");
  EXPECT_EQ(h.pid, -1);
  EXPECT_EQ(h.tid, 0);
  EXPECT_EQ(h.cpu, 0);
  EXPECT_EQ(h.time_ns, 776'613'664'000);
  EXPECT_EQ(h.period, 10101010u);
  EXPECT_EQ(h.event, "cpu-clock:ppp");
  EXPECT_EQ(h.rest, "");
}

TEST(PerfSampleHeader, KeepsBlanksInCommAndSplitsPidTid) {
  auto h = header("Web Content 11303/11304 [001] 810.275051:    1001001 cpu-clock:ppp: ");
  EXPECT_EQ(h.comm, "Web Content");
  EXPECT_EQ(h.pid, 11303);
  EXPECT_EQ(h.tid, 11304);
  EXPECT_EQ(h.cpu, 1);
}

TEST(PerfSampleHeader, CommWithDigitWordIsNotTakenForThePid) {
  auto h = header("Timer 1 1234   5.000001: cpu-clock: ");
  EXPECT_EQ(h.comm, "Timer 1");
  EXPECT_EQ(h.tid, 1234);
  auto g = header("Timer 1 1234 cpu-clock:");
  EXPECT_EQ(g.comm, "Timer 1");
  EXPECT_EQ(g.tid, 1234);
  EXPECT_EQ(g.event, "cpu-clock");
}

TEST(PerfSampleHeader, ReadsTheInlineIpOfSamplesWithoutCallChain) {
  auto h = header(
      "     Web Content 12584   865.019285:    2004008 cpu-clock:ppp:      7fec606cd007 [unknown] "
      "(/tmp/perf-12584.map)");
  EXPECT_EQ(h.comm, "Web Content");
  EXPECT_EQ(h.tid, 12584);
  EXPECT_EQ(h.rest, "7fec606cd007 [unknown] (/tmp/perf-12584.map)");
}

TEST(PerfSampleHeader, AcceptsFieldSetsWithoutTimeOrEvent) {
  auto h = header("kworker/u8:2-ev 11303 ");
  EXPECT_EQ(h.comm, "kworker/u8:2-ev");
  EXPECT_EQ(h.tid, 11303);
  EXPECT_EQ(h.event, "");
  auto g = header("workload 13463/13463   885.464389: ");
  EXPECT_EQ(g.pid, 13463);
  EXPECT_EQ(g.time_ns, 885'464'389'000);
  EXPECT_EQ(g.event, "");
}

TEST(PerfSampleHeader, SeparatesTracepointPayload) {
  auto h = header("perf 123 [001] 5.000001: sched:sched_switch: prev_comm=perf prev_pid=123");
  EXPECT_EQ(h.event, "sched:sched_switch");
  EXPECT_EQ(h.rest, "prev_comm=perf prev_pid=123");
}

TEST(PerfSampleHeader, RejectsLinesThatAreNotHeaders) {
  PerfSampleHeader h;
  EXPECT_FALSE(parse_sample_header("", h));
  EXPECT_FALSE(parse_sample_header("hello world", h));
  EXPECT_FALSE(parse_sample_header("12345", h));
  EXPECT_FALSE(parse_sample_header("comm notapid 1.0: cpu-clock:", h));
}

TEST(PerfFrameLine, SplitsAddressSymbolAndDso) {
  auto f = frame("\t    ffffffff821f236b pv_native_safe_halt+0xb ([kernel.kallsyms])");
  EXPECT_EQ(f.address, 0xffffffff821f236bu);
  EXPECT_EQ(f.symbol, "pv_native_safe_halt");
  EXPECT_EQ(f.dso, "[kernel.kallsyms]");
}

TEST(PerfFrameLine, KeepsDeletedMarkerInsideTheDso) {
  auto f = frame("\t            111b [unknown] (/tmp/libgpdel-13627.so (deleted))");
  EXPECT_EQ(f.address, 0x111bu);
  EXPECT_EQ(f.symbol, "[unknown]");
  EXPECT_EQ(f.dso, "/tmp/libgpdel-13627.so (deleted)");
}

TEST(PerfFrameLine, KeepsOperatorPlusAndSymbolsWithBlanks) {
  EXPECT_EQ(frame("\t 1345 gpfix::Vec::operator++0x33 (/w)").symbol, "gpfix::Vec::operator+");
  EXPECT_EQ(frame("\t 1345 gpfix::Vec::operator+ (/w)").symbol, "gpfix::Vec::operator+");
  auto j =
      frame("\t    7f106224e007 LazyCompile:*hotLoop /srv/app.js:12+0x7 (/tmp/perf-13463.map)");
  EXPECT_EQ(j.symbol, "LazyCompile:*hotLoop /srv/app.js:12");
  EXPECT_EQ(j.dso, "/tmp/perf-13463.map");
  auto c = frame("\t 10 std::function<void ()>::operator()() const+0x12 (/lib/x.so)");
  EXPECT_EQ(c.symbol, "std::function<void ()>::operator()() const");
  EXPECT_EQ(c.dso, "/lib/x.so");
}

TEST(PerfFrameLine, AcceptsMissingSymbolOrDso) {
  auto a = frame("\t            8e5f");
  EXPECT_EQ(a.address, 0x8e5fu);
  EXPECT_EQ(a.symbol, "");
  EXPECT_EQ(a.dso, "");
  auto s = frame("\t 10 f(int)");  // -F ip,sym: a C++ signature is not a DSO
  EXPECT_EQ(s.symbol, "f(int)");
  EXPECT_EQ(s.dso, "");
  auto d = frame("\t 10 (/lib/x.so)");  // -F ip,dso
  EXPECT_EQ(d.symbol, "");
  EXPECT_EQ(d.dso, "/lib/x.so");
}

TEST(PerfFrameLine, RejectsNonHexAddresses) {
  PerfFrame f;
  EXPECT_FALSE(parse_frame_line("\tnothex sym (dso)", f));
  EXPECT_FALSE(parse_frame_line("", f));
  EXPECT_FALSE(parse_frame_line("\t 123456789abcdef01 x (y)", f));  // 17 digits
}

TEST(PerfSymbolOffset, RemovesOnlyAWellFormedTrailingOffset) {
  EXPECT_EQ(strip_symbol_offset("main+0x5e5"), "main");
  EXPECT_EQ(strip_symbol_offset("operator+"), "operator+");
  EXPECT_EQ(strip_symbol_offset("a+0x"), "a+0x");
  EXPECT_EQ(strip_symbol_offset("a+0xzz"), "a+0xzz");
  EXPECT_EQ(strip_symbol_offset("+0x10"), "+0x10");
}

TEST(PerfHeaderComment, SplitsKeyAndValue) {
  std::string_view k, v;
  ASSERT_TRUE(parse_header_comment("# os release : 6.18.44-fc-v595", k, v));
  EXPECT_EQ(k, "os release");
  EXPECT_EQ(v, "6.18.44-fc-v595");
  EXPECT_FALSE(parse_header_comment("# ========", k, v));
}

}  // namespace
}  // namespace gp::test::import
