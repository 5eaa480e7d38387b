// The perf script importer on real perf output (tests/fixtures/perf, made by generate.sh there)
// and on hand-written tricky lines: exact frames, pids, counts, kinds.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/import/perf_script.h"

namespace gp::test::import {
namespace {

using gp::import::import_perf_script;
using gp::import::PerfScriptOptions;
using gp::import::PerfScriptParser;
using gp::import::PerfScriptStats;
using model::FrameKind;
using model::MappingKind;
using model::Session;
using model::SymbolStatus;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GP_TEST_DATA_DIR) + "/fixtures/perf/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Sample headers counted the simple way: lines that are not frames, comments or blank.
uint64_t count_headers(const std::string& text, std::string_view must_contain = {}) {
  std::istringstream in(text);
  std::string line;
  uint64_t n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '\t' || line[0] == '#') continue;
    if (must_contain.empty() || line.find(must_contain) != std::string::npos) ++n;
  }
  return n;
}

// A frame as tests compare it: name (or "?" when unsymbolized), DSO path, kind.
struct Frame {
  std::string name;
  std::string dso;
  FrameKind kind;
  uint64_t address;
  bool ret;
  bool operator==(const Frame&) const = default;
};

std::vector<Frame> frames_of(const Session& s, uint64_t stack_id) {
  std::vector<Frame> out;
  for (uint64_t id : s.stack(stack_id).location_ids) {
    const model::Location& l = s.location(id);
    std::string name = l.lines.empty() ? "?" : s.function(l.lines[0].function_id).name;
    std::string dso = l.mapping_id ? s.mapping(l.mapping_id).path : "";
    out.push_back({name, dso, l.kind, l.address, l.is_return_address});
  }
  return out;
}

const model::Mapping* find_mapping(const Session& s, std::string_view path_prefix) {
  for (const auto& m : s.mappings)
    if (m.path.rfind(path_prefix, 0) == 0) return &m;
  return nullptr;
}

bool has_function(const Session& s, std::string_view name) {
  for (const auto& f : s.functions)
    if (f.name == name) return true;
  return false;
}

TEST(PerfScriptImport, BuildsExactFramesOfOneSample) {
  Session s;
  auto st = import_perf_script(
      "Web Content 4242/4243 [001]   10.000001:    1001001 cpu-clock:ppp: \n"
      "\tffffffff821f236b pv_native_safe_halt+0xb ([kernel.kallsyms])\n"
      "\tffffffff813c38a6 do_idle+0x136 ([kernel.kallsyms])\n"
      "\t    1345 gpfix::Vec::operator++0x33 (/srv/w)\n"
      "\t    7f00 [unknown] (/tmp/perf-4242.map)\n"
      "\t       0 [unknown] ([unknown])\n"
      "\n",
      s);
  EXPECT_EQ(st.samples, 1u);
  EXPECT_EQ(st.skipped_lines, 0u);
  ASSERT_EQ(s.samples.size(), 1u);
  const model::Sample& smp = s.samples[0];
  EXPECT_EQ(smp.pid, 4242);
  EXPECT_EQ(smp.tid, 4243);
  EXPECT_EQ(smp.cpu, 1);
  EXPECT_EQ(smp.count, 1u);
  EXPECT_EQ(smp.weight, 1001001u);
  std::vector<Frame> want = {
      {"pv_native_safe_halt", "[kernel.kallsyms]", FrameKind::kernel, 0xffffffff821f236b, false},
      {"do_idle", "[kernel.kallsyms]", FrameKind::kernel, 0xffffffff813c38a6, true},
      {"gpfix::Vec::operator+", "/srv/w", FrameKind::native, 0x1345, false},  // user-space leaf
      {"?", "/tmp/perf-4242.map", FrameKind::jit, 0x7f00, true},
      {"?", "", FrameKind::native, 0, true},
  };
  EXPECT_EQ(frames_of(s, smp.stack_id), want);
  EXPECT_EQ(s.header.sampling.event, "cpu-clock:ppp");
  EXPECT_EQ(s.header.source, model::SourceKind::imported);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].comm, "Web Content");
  EXPECT_EQ(s.processes[0].pid, 4242);
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].tid, 4243);
}

TEST(PerfScriptImport, KeepsASampleWithoutAnyFrame) {
  // -F comm,tid,time,event: no call chain, no ip — still a sample of that thread.
  Session s;
  auto st = import_perf_script("x 5 1.000001: cpu-clock: \nx 5 1.000002: cpu-clock: \n", s);
  EXPECT_EQ(st.samples, 2u);
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].count, 2u);
  EXPECT_TRUE(s.stack(s.samples[0].stack_id).location_ids.empty());
}

TEST(PerfScriptImport, ClassifiesMappingsAndStatuses) {
  Session s;
  import_perf_script(
      "a 7/7 1.000001: cpu-clock: \n"
      "\tffffffffc0a01000 nft_do_chain+0x10 ([nf_tables])\n"
      "\tffffffff81000000 entry+0x1 ([kernel.kallsyms])\n"
      "\t    7ffc00000900 __vdso_clock_gettime+0x20 ([vdso])\n"
      "\t    111b [unknown] (/tmp/lib.so (deleted))\n"
      "\t       0 [unknown] ([unknown])\n",
      s);
  ASSERT_EQ(s.mappings.size(), 4u);
  EXPECT_EQ(find_mapping(s, "[nf_tables]")->kind, MappingKind::module);
  EXPECT_EQ(find_mapping(s, "[nf_tables]")->pid, 0);
  EXPECT_EQ(find_mapping(s, "[kernel.kallsyms]")->kind, MappingKind::kernel);
  EXPECT_EQ(find_mapping(s, "[vdso]")->kind, MappingKind::vdso);
  EXPECT_EQ(find_mapping(s, "[vdso]")->pid, 7);
  EXPECT_EQ(find_mapping(s, "/tmp/lib.so")->path, "/tmp/lib.so (deleted)");
  EXPECT_EQ(find_mapping(s, "/tmp/lib.so")->kind, MappingKind::user);
  auto ids = s.stack(s.samples.at(0).stack_id).location_ids;
  EXPECT_EQ(s.location(ids[0]).kind, FrameKind::kernel);
  EXPECT_EQ(s.location(ids[0]).status, SymbolStatus::symbolic);
  EXPECT_EQ(s.location(ids[3]).status, SymbolStatus::unsymbolized);
  EXPECT_EQ(s.location(ids[3]).address, 0x111bu);
  EXPECT_NE(s.location(ids[3]).mapping_id, 0u);
  EXPECT_EQ(s.location(ids[4]).status, SymbolStatus::unmapped);
}

TEST(PerfScriptImport, AggregatesEqualSamplesAndSumsPeriods) {
  std::string one = "x 5 [000] 1.000001: 100 cpu-clock: \n\t10 f+0x1 (/bin/x)\n\n";
  Session s;
  auto st = import_perf_script(one + one + one, s);
  EXPECT_EQ(st.samples, 3u);
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].count, 3u);
  EXPECT_EQ(s.samples[0].weight, 300u);
  EXPECT_EQ(s.samples[0].pid, 5);  // tid only: the thread stands for its process
  EXPECT_EQ(st.samples_without_pid, 3u);
  EXPECT_EQ(s.samples[0].cpu, 0);
}

TEST(PerfScriptImport, SumsOneStackAcrossCpusWithCpuUnknown) {
  auto sample = [](const char* cpu) {
    return std::string("x 5/6 [") + cpu + "] 1.000001: 100 cpu-clock: \n\t10 f+0x1 (/bin/x)\n\n";
  };
  Session s;
  auto st = import_perf_script(sample("001") + sample("001") + sample("003"), s);
  EXPECT_EQ(st.samples, 3u);
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].count, 3u);
  EXPECT_EQ(s.samples[0].weight, 300u);
  EXPECT_EQ(s.samples[0].cpu, -1);  // formats/README.md: -1 when several CPUs were summed
}

TEST(PerfScriptImport, ReadsHostAndEventFromHeaderLines) {
  Session s;
  auto st = import_perf_script(fixture("workload-g.txt"), s);
  EXPECT_EQ(st.skipped_lines, 0u);
  EXPECT_FALSE(s.header.host.hostname.empty());
  EXPECT_FALSE(s.header.host.kernel_release.empty());
  EXPECT_EQ(s.header.host.machine, "x86_64");
  EXPECT_GT(s.header.host.cpu_count, 0u);
  EXPECT_EQ(s.header.sampling.event, "cpu-clock:ppp");
  EXPECT_EQ(s.header.sampling.frequency_hz, 999u);
  EXPECT_GT(s.header.start_time_ns, 1'600'000'000'000'000'000);
  EXPECT_GT(s.header.sampling.duration_ns, 0);
}

TEST(PerfScriptImport, ImportsEverySampleOfARealRecording) {
  std::string text = fixture("workload-g.txt");
  Session s;
  auto st = import_perf_script(text, s);
  EXPECT_EQ(st.samples, count_headers(text));
  EXPECT_EQ(s.total_samples(), st.samples);
  EXPECT_EQ(st.skipped_lines, 0u);
  EXPECT_EQ(st.samples_without_pid, 0u);
  // comm with a blank, a kworker-like thread name, C++ names with operator+ and templates.
  const model::Process* main_proc = nullptr;
  for (const auto& p : s.processes)
    if (p.comm == "Web Content") main_proc = &p;
  ASSERT_NE(main_proc, nullptr);
  bool worker_thread = false;
  for (const auto& t : s.threads)
    if (t.comm == "kworker/u8:2-ev" && t.pid == main_proc->pid && t.tid != t.pid)
      worker_thread = true;
  EXPECT_TRUE(worker_thread);
  EXPECT_TRUE(has_function(s, "gpfix::Vec::operator+"));
  EXPECT_TRUE(has_function(s, "gpfix::accumulate_pairs<gpfix::Vec>"));
  // The JIT function named by the perf map, on a jit_map mapping of the process.
  const model::Mapping* jit = find_mapping(s, "/tmp/perf-");
  ASSERT_NE(jit, nullptr);
  EXPECT_EQ(jit->kind, MappingKind::jit_map);
  EXPECT_EQ(jit->pid, main_proc->pid);
  EXPECT_TRUE(has_function(s, "LazyCompile:*hotLoop /srv/app.js:12"));
  for (const auto& l : s.locations)
    if (l.mapping_id && s.mapping(l.mapping_id).kind == MappingKind::kernel) {
      EXPECT_EQ(l.kind, FrameKind::kernel);
    }
}

// The frame lines of `text` with their leading tab and blanks replaced by `indent`.
std::string reindent(const std::string& text, const std::string& indent) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '\t')
      line = indent + line.substr(line.find_first_not_of(" \t"));
    out += line + "\n";
  }
  return out;
}

// Every sample as its (comm, frames) text, in order: what the importer understood.
std::vector<std::string> sample_texts(const Session& s) {
  std::vector<std::string> out;
  for (const auto& smp : s.samples) {
    std::string t = s.find_process(smp.pid)->comm + " x" + std::to_string(smp.count) + ":";
    for (const Frame& f : frames_of(s, smp.stack_id)) t += " " + f.name + "@" + f.dso;
    out.push_back(t);
  }
  return out;
}

TEST(PerfScriptImport, ReadsFrameLinesWhateverTheirIndentation) {
  std::string text = fixture("workload-g.txt");
  Session tabbed;
  auto st = import_perf_script(text, tabbed);
  ASSERT_GT(st.frames, st.samples);
  for (std::string indent : {"        ", "    \t", "", " "}) {
    SCOPED_TRACE("indent '" + indent + "'");
    Session s;
    auto got = import_perf_script(reindent(text, indent), s);
    EXPECT_EQ(got.skipped_lines, 0u);
    EXPECT_EQ(got.samples, st.samples);
    EXPECT_EQ(got.frames, st.frames);
    EXPECT_EQ(sample_texts(s), sample_texts(tabbed));
  }
}

TEST(PerfScriptImport, TellsAHeaderFromAnUnindentedFrame) {
  // "dd" is hex and "cc1" too: as a comm they start headers, not frames.
  Session s;
  auto st = import_perf_script(
      "dd 5/5 1.000001: 1000 cpu-clock: \n10 f (/bin/dd)\n20 main (/bin/dd)\n"
      "cc1 6/6 1.000002: 1000 cpu-clock: \n30 g (/bin/cc1)\n",
      s);
  EXPECT_EQ(st.skipped_lines, 0u);
  ASSERT_EQ(st.samples, 2u);
  EXPECT_EQ(st.frames, 3u);
  EXPECT_EQ(sample_texts(s),
            (std::vector<std::string>{"dd x1: f@/bin/dd main@/bin/dd", "cc1 x1: g@/bin/cc1"}));
}

TEST(PerfScriptImport, KeepsTheCommEachSampleWasTakenUnder) {
  // A shell that execs prog: perf prints the old comm before the exec, the new one after. The
  // worker thread's own name is not the process's.
  Session s;
  auto st = import_perf_script(
      "run 5/5 1.000001: 1000 cpu-clock: \n\t10 __execve (/bin/run)\n\n"
      "run 5/5 1.000002: 1000 cpu-clock: \n\t10 __execve (/bin/run)\n\n"
      "prog 5/5 1.000003: 1000 cpu-clock: \n\t20 main (/bin/prog)\n\n"
      "worker 5/6 1.000004: 1000 cpu-clock: \n\t30 work (/bin/prog)\n\n",
      s);
  ASSERT_EQ(st.samples, 4u);
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const auto& smp : s.samples) got.emplace_back(smp.comm, smp.count);
  EXPECT_EQ(got,
            (std::vector<std::pair<std::string, uint64_t>>{{"run", 2}, {"prog", 1}, {"prog", 1}}));
  EXPECT_EQ(s.find_process(5)->comm, "prog");
}

TEST(PerfScriptImport, HandlesSystemWideOutputWithDeletedDsos) {
  std::string text = fixture("system-a-g.txt");
  Session s;
  auto st = import_perf_script(text, s);
  EXPECT_EQ(st.samples, count_headers(text));
  EXPECT_EQ(st.skipped_lines, 0u);
  const model::Mapping* del = nullptr;
  for (const auto& m : s.mappings)
    if (m.path.find(" (deleted)") != std::string::npos) del = &m;
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(del->kind, MappingKind::user);
  bool workload = false;  // the fixture's own program, running while perf recorded the system
  for (const auto& p : s.processes) workload |= p.comm == "Web Content" && p.pid > 0;
  EXPECT_TRUE(workload);
  for (const auto& smp : s.samples) EXPECT_TRUE(smp.cpu >= 0 || (smp.cpu == -1 && smp.count > 1));
}

TEST(PerfScriptImport, KeepsTheFirstEventAndCountsTheOthers) {
  std::string text = fixture("multi-event.txt");
  Session s;
  auto st = import_perf_script(text, s);
  EXPECT_EQ(st.event, "cpu-clock");
  EXPECT_EQ(st.samples, count_headers(text, " cpu-clock:"));
  ASSERT_EQ(st.other_events.size(), 1u);
  EXPECT_EQ(st.other_events[0].first, "task-clock");
  EXPECT_EQ(st.other_events[0].second, count_headers(text, " task-clock:"));
  EXPECT_EQ(st.skipped_lines, 0u);
}

TEST(PerfScriptImport, SelectsTheEventAskedFor) {
  std::string text = fixture("multi-event.txt");
  Session s;
  auto st = import_perf_script(text, s, PerfScriptOptions{.event = "task-clock"});
  EXPECT_EQ(st.event, "task-clock");
  EXPECT_EQ(s.header.sampling.event, "task-clock");
  EXPECT_EQ(st.samples, count_headers(text, " task-clock:"));
  Session t;
  auto st2 =
      import_perf_script(fixture("workload-g.txt"), t, PerfScriptOptions{.event = "cpu-clock"});
  EXPECT_EQ(st2.event, "cpu-clock:ppp");  // the name without perf's modifiers matches
  EXPECT_GT(st2.samples, 0u);
}

TEST(PerfScriptImport, UsesTheInlineIpWhenThereIsNoCallChain) {
  std::string text = fixture("no-callchain.txt");
  Session s;
  auto st = import_perf_script(text, s);
  EXPECT_EQ(st.samples, count_headers(text));
  EXPECT_EQ(st.frames, st.samples);
  EXPECT_EQ(st.skipped_lines, 0u);
  for (const auto& stack : s.stacks) EXPECT_EQ(stack.location_ids.size(), 1u);
  EXPECT_TRUE(has_function(s, "gpfix::Vec::operator+"));
}

TEST(PerfScriptImport, SurvivesOtherFieldSets) {
  for (const char* name : {"fields-no-time.txt", "fields-no-symoff.txt", "fields-ip-only.txt",
                           "workload-g-default.txt"}) {
    std::string text = fixture(name);
    Session s;
    auto st = import_perf_script(text, s);
    EXPECT_EQ(st.skipped_lines, 0u) << name;
    EXPECT_EQ(st.samples, count_headers(text)) << name;
    EXPECT_GT(st.frames, st.samples) << name;
  }
  Session s;
  import_perf_script(fixture("fields-ip-only.txt"), s);
  for (const auto& l : s.locations) EXPECT_EQ(l.status, SymbolStatus::unmapped);
}

TEST(PerfScriptImport, GivesTheSameSessionWhateverTheFeedSizes) {
  std::string text = fixture("system-a-g.txt");
  Session whole;
  import_perf_script(text, whole);
  for (size_t piece : {1u, 7u, 4096u}) {
    Session s;
    PerfScriptParser p(s);
    for (size_t i = 0; i < text.size(); i += piece) p.feed(std::string_view(text).substr(i, piece));
    p.finish();
    EXPECT_EQ(s.samples.size(), whole.samples.size()) << piece;
    EXPECT_EQ(s.locations.size(), whole.locations.size()) << piece;
    EXPECT_EQ(s.stacks.size(), whole.stacks.size()) << piece;
    EXPECT_EQ(s.functions.size(), whole.functions.size()) << piece;
  }
}

// Room taken for the input (none, about right, or far more than it makes) changes nothing in the
// session: the same samples on the same stacks of the same frames.
TEST(PerfScriptImport, GivesTheSameSessionWhateverRoomItReserved) {
  std::string text = fixture("system-a-g.txt");
  Session whole;
  import_perf_script(text, whole);
  for (uint64_t bytes : {uint64_t{0}, uint64_t{text.size()}, uint64_t{1} << 40}) {
    Session s;
    PerfScriptParser p(s);
    p.reserve_for(bytes);
    p.feed(text);
    p.finish();
    ASSERT_EQ(s.samples.size(), whole.samples.size()) << bytes;
    ASSERT_EQ(s.stacks.size(), whole.stacks.size()) << bytes;
    ASSERT_EQ(s.locations.size(), whole.locations.size()) << bytes;
    for (size_t i = 0; i < s.samples.size(); ++i) {
      EXPECT_EQ(s.samples[i].stack_id, whole.samples[i].stack_id) << bytes << " sample " << i;
      EXPECT_EQ(s.samples[i].count, whole.samples[i].count) << bytes << " sample " << i;
    }
    for (size_t i = 0; i < s.stacks.size(); ++i)
      EXPECT_EQ(s.stacks[i].location_ids, whole.stacks[i].location_ids) << bytes << " stack " << i;
    for (size_t i = 0; i < s.locations.size(); ++i)
      EXPECT_EQ(s.locations[i].address, whole.locations[i].address) << bytes << " location " << i;
  }
}

// Thousands of distinct frames, repeated in a scrambled order by two processes: more than the
// importer's cache of recent lines holds, so lookups go through its eviction and its big table.
// Every sample must still get exactly the frames printed, with one location per process, frame
// line and role (leaf or return address), whatever the feed sizes.
TEST(PerfScriptImport, InternsManyRepeatedFramesPerProcess) {
  constexpr uint64_t kFrames = 5000;
  constexpr size_t kDepth = 12;
  size_t frame_line_bytes = 0;  // all alike: 4-digit names and addresses
  std::string text;
  uint64_t x = 12345;
  std::vector<std::vector<uint64_t>> printed;  // addresses of each sample, leaf first
  for (int n = 0; n < 4000; ++n) {
    int pid = 100 + n % 2;
    text += "w " + std::to_string(pid) + " [000] 1.000001: 1 cpu-clock:\n";
    printed.emplace_back();
    for (size_t d = 0; d < kDepth; ++d) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t a = 0x1000 + (x >> 33) % kFrames;
      printed.back().push_back(a);
      char line[96];
      std::snprintf(line, sizeof line, "\t%16llx f%llu+0x4 (/usr/bin/w)\n",
                    static_cast<unsigned long long>(a), static_cast<unsigned long long>(a));
      text += line;
      frame_line_bytes = std::strlen(line);
    }
    text += "\n";
  }
  // Feeds a whole number of frame lines long put the lines of a sample that continues in the next
  // feed at the same buffer offsets as lines of the previous one: stale state must not match.
  for (size_t piece : {size_t{97}, 5 * frame_line_bytes, text.size()}) {
    Session s;
    PerfScriptParser p(s);
    std::string buffer(piece, '\0');  // reused for every feed, as gp-import reuses its buffer
    uint64_t ended = 0;               // samples whose blank line was fed
    size_t next_end = text.find("\n\n");
    for (size_t i = 0; i < text.size(); i += piece) {
      size_t n = text.copy(buffer.data(), piece, i);
      p.feed(std::string_view(buffer).substr(0, n));
      // gp-import writes chunks between feeds: every sample ended so far must be in them.
      uint64_t in_session = 0;
      for (const auto& smp : s.samples) in_session += smp.count;
      while (next_end != std::string::npos && next_end + 2 <= i + n) {
        ++ended;
        next_end = text.find("\n\n", next_end + 1);
      }
      ASSERT_EQ(in_session, ended) << "after " << i + n << " bytes in feeds of " << piece;
    }
    p.finish();
    ASSERT_EQ(p.stats().samples, printed.size());
    ASSERT_EQ(p.stats().skipped_lines, 0u);
    std::map<std::tuple<int32_t, uint64_t, bool>, uint64_t> location_of;
    uint64_t sampled = 0;
    for (const auto& smp : s.samples) {
      sampled += smp.count;
      const auto& ids = s.stack(smp.stack_id).location_ids;
      ASSERT_EQ(ids.size(), kDepth);
      for (size_t d = 0; d < ids.size(); ++d) {
        const model::Location& l = s.location(ids[d]);
        EXPECT_EQ(l.is_return_address, d > 0);
        EXPECT_EQ(s.function(l.lines.at(0).function_id).name, "f" + std::to_string(l.address));
        auto [it, fresh] = location_of.try_emplace({smp.pid, l.address, d > 0}, ids[d]);
        EXPECT_EQ(it->second, ids[d]) << "one location per process and frame; feeds of " << piece;
      }
    }
    EXPECT_EQ(sampled, printed.size());
    // A frame line's own location is made when it is first seen, its return-address twin when
    // first used as one: one of each per process and frame, no more.
    std::set<std::pair<int32_t, uint64_t>> frames_seen;
    size_t returns = 0;
    for (const auto& [key, id] : location_of) {
      frames_seen.insert({std::get<0>(key), std::get<1>(key)});
      returns += std::get<2>(key);
    }
    EXPECT_EQ(s.locations.size(), frames_seen.size() + returns);
    // Samples are summed per (pid, tid, stack): the stacks must be the printed ones, in order
    // of first appearance.
    std::map<std::pair<int32_t, std::vector<uint64_t>>, uint64_t> want, got;
    for (size_t n = 0; n < printed.size(); ++n)
      ++want[{100 + static_cast<int32_t>(n % 2), printed[n]}];
    for (const auto& smp : s.samples) {
      std::vector<uint64_t> addrs;
      for (uint64_t id : s.stack(smp.stack_id).location_ids)
        addrs.push_back(s.location(id).address);
      got[{smp.pid, addrs}] += smp.count;
    }
    EXPECT_EQ(got, want) << piece;
  }
}

TEST(PerfScriptImport, CountsLinesItDoesNotUnderstand) {
  Session s;
  auto st = import_perf_script(
      "x 5 1.000001: cpu-clock: \n\t10 f (/bin/x)\n\n"
      "this is not perf\n"
      "x 5 1.000002: cpu-clock: \n\t10 f (/bin/x)\n\t20 g (/bin/x)\n\n"
      "\tnot a frame\n",
      s);
  EXPECT_EQ(st.samples, 2u);
  EXPECT_EQ(st.skipped_lines, 2u);
  EXPECT_EQ(st.first_skipped_line, 4u);
}

TEST(PerfScriptImport, FindsNoSampleInGarbage) {
  Session s;
  auto st = import_perf_script("hello\nworld\n\x01\x02\x03 binary\n", s);
  EXPECT_EQ(st.samples, 0u);
  EXPECT_EQ(st.skipped_lines, 3u);
  EXPECT_EQ(st.first_skipped_line, 1u);
}

TEST(PerfScriptImport, SkipsOverlongLinesAndGoesOn) {
  Session s;
  std::string text(3u << 20, 'A');
  text += "\nx 5 1.000001: cpu-clock: \n\t10 f (/bin/x)\n";
  PerfScriptParser p(s);
  for (size_t i = 0; i < text.size(); i += 65536) p.feed(std::string_view(text).substr(i, 65536));
  p.finish();
  EXPECT_EQ(p.stats().skipped_lines, 1u);
  EXPECT_EQ(p.stats().samples, 1u);
}

TEST(PerfScriptImport, ToleratesCrLfAndAMissingLastNewline) {
  Session s;
  auto st = import_perf_script(
      "x 5 1.000001: cpu-clock: \r\n\t10 f+0x1 (/bin/x)\r\n\r\n"
      "x 5 1.000002: cpu-clock: \r\n\t10 f+0x1 (/bin/x)",
      s);
  EXPECT_EQ(st.samples, 2u);
  EXPECT_EQ(st.skipped_lines, 0u);
  EXPECT_TRUE(has_function(s, "f"));
}

TEST(PerfScriptImport, IgnoresSideBandRecords) {
  Session s;
  auto st = import_perf_script(
      "perf 12 [000] 1.000001: PERF_RECORD_COMM: perf:12/12\n"
      "x 5 1.000002: cpu-clock: \n\t10 f (/bin/x)\n",
      s);
  EXPECT_EQ(st.side_band_records, 1u);
  EXPECT_EQ(st.samples, 1u);
  EXPECT_EQ(st.skipped_lines, 0u);
}

TEST(PerfScriptImport, WritesAnArchiveThatReadsBack) {
  Session s;
  auto st = import_perf_script(fixture("workload-g.txt"), s);
  std::string bytes;
  auto out = archive::OutputStream::to_string(&bytes, true);
  archive::Writer w(*out);
  ASSERT_TRUE(w.write_session(s));
  ASSERT_TRUE(out->close());
  auto in = archive::InputStream::from_memory(bytes);
  auto a = archive::read_archive(*in);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->sessions.size(), 1u);
  const Session& r = a->sessions[0];
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.total_samples(), st.samples);
  EXPECT_EQ(r.locations.size(), s.locations.size());
  EXPECT_EQ(r.header.source, model::SourceKind::imported);
  EXPECT_EQ(r.header.sampling.event, "cpu-clock:ppp");
}

TEST(PerfDataMagic, RecognisesPerfData) {
  EXPECT_TRUE(gp::import::looks_like_perf_data(std::string_view("PERFILE2\x10\0\0\0", 12)));
  EXPECT_FALSE(gp::import::looks_like_perf_data("perf 12 [000] 1.0: cpu-clock:"));
  EXPECT_FALSE(gp::import::looks_like_perf_data("PERF"));
}

}  // namespace
}  // namespace gp::test::import
