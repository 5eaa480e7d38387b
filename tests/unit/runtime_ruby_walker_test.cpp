// gp's Ruby sampler against a live Debian ruby: the stacks it reads from process memory must
// equal what the target's own Thread#backtrace_locations reports, per thread (labels, C
// functions, file:line), for threads parked in methods, blocks, C functions (Array#each,
// Integer#times, Kernel#sleep) and a lambda; a process that exits gives `gone`; a corrupted
// control frame gives `torn` (never a crash, a hang or invented frames); and the gp-ruby adapter
// turns a stack that cannot be read into an error frame and goes on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "gp/runtime/adapters.h"
#include "runtime/remote/mapped_symbols.h"
#include "runtime/ruby/ruby_sampler.h"
#include "runtime_python_target.h"  // test::PythonTarget runs any interpreter on a script

namespace gp::runtime::ruby {
namespace {

const std::string kScript = std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/ruby/target.rb";

struct Expected {
  int32_t tid = 0;
  std::string name;
  std::vector<RubyFrame> frames;  // root first
};

std::vector<Expected> read_expected(const std::string& path) {
  std::vector<Expected> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("thread ")) {
      std::istringstream ls(line.substr(7));
      Expected& e = out.emplace_back();
      ls >> e.tid >> e.name;
    } else if (line.starts_with("frame ") && !out.empty()) {
      std::istringstream ls(line.substr(6));
      RubyFrame f;
      std::string kind, line_text;
      std::getline(ls, kind, '\t');
      std::getline(ls, f.label, '\t');
      std::getline(ls, f.path, '\t');
      std::getline(ls, line_text);
      f.cfunc = kind == "c";
      f.line = static_cast<uint32_t>(std::stoul(line_text));
      out.back().frames.push_back(f);
    }
  }
  return out;
}

// rbspy's view of a frame: C functions have no file or line of their own.
std::string describe(const std::vector<RubyFrame>& frames) {
  std::string s;
  for (const auto& f : frames) {
    s += f.cfunc ? f.label + " [c function]\n"
                 : f.label + " (" + f.path + ":" + std::to_string(f.line) + ")\n";
  }
  return s;
}

std::unique_ptr<RubySampler> attach(pid_t pid) {
  auto attached = RubySampler::attach(pid);
  if (auto* failure = std::get_if<AttachFailure>(&attached)) {
    ADD_FAILURE() << failure->reason;
    return nullptr;
  }
  return std::move(std::get<std::unique_ptr<RubySampler>>(attached));
}

std::string ruby_version() {
  FILE* p = popen("/usr/bin/ruby --disable-gems -e 'print RUBY_VERSION'", "r");
  char buf[64] = {};
  size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
  if (p) pclose(p);
  return std::string(buf, n);
}

TEST(RuntimeRubyWalker, StacksMatchTheTargetsOwnBacktraceLocations) {
  test::PythonTarget target("/usr/bin/ruby", kScript);
  ASSERT_TRUE(target.wait_ready()) << "target did not start";
  auto expected = read_expected(target.snapshot_path());
  ASSERT_EQ(expected.size(), 4u);
  auto sampler = attach(target.pid());
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(sampler->interpreter().version.text(), ruby_version());
  EXPECT_NE(sampler->interpreter().symbols_address, 0u) << "C functions would be unnamed";
  std::vector<RubyThreadSample> threads;
  ASSERT_EQ(sampler->sample(threads, 10), WalkStatus::ok) << sampler->last_torn_reason();
  size_t c_frames = 0;
  for (const auto& want : expected) {
    SCOPED_TRACE(want.name);
    const RubyThreadSample* got = nullptr;
    for (const auto& t : threads) {
      if (t.tid == want.tid) got = &t;
    }
    ASSERT_NE(got, nullptr) << "thread " << want.tid << " not sampled";
    EXPECT_EQ(describe(got->frames), describe(want.frames));
    for (const auto& f : want.frames) c_frames += f.cfunc;
  }
  EXPECT_GE(c_frames, 10u);  // sleep, each and times were all seen as C functions
  // A steady stack is read again from the caches, identically.
  std::vector<RubyThreadSample> again;
  ASSERT_EQ(sampler->sample(again, 10), WalkStatus::ok);
  ASSERT_EQ(again.size(), threads.size());
  for (size_t i = 0; i < again.size(); ++i)
    EXPECT_EQ(describe(again[i].frames), describe(threads[i].frames));
}

TEST(RuntimeRubyWalker, DeepStacksAreCutAtTheRootEnd) {
  test::PythonTarget target("/usr/bin/ruby", kScript);
  ASSERT_TRUE(target.wait_ready());
  auto expected = read_expected(target.snapshot_path());
  ASSERT_FALSE(expected.empty());
  WalkLimits limits;
  limits.max_depth = 4;  // control frames read per thread, from the leaf
  auto attached = RubySampler::attach(target.pid(), "/proc", limits);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<RubySampler>>(attached));
  auto& sampler = *std::get<std::unique_ptr<RubySampler>>(attached);
  std::vector<RubyThreadSample> threads;
  ASSERT_EQ(sampler.sample(threads, 10), WalkStatus::ok);
  const auto& deep = expected[0];  // sleep, park, descend, block in descend, each, ...
  ASSERT_GT(deep.frames.size(), 4u);
  std::vector<RubyFrame> leaf_end(deep.frames.end() - 4, deep.frames.end());
  for (const auto& t : threads) {
    if (t.tid == deep.tid) {
      EXPECT_EQ(describe(t.frames), describe(leaf_end));
    }
  }
}

TEST(RuntimeRubyWalker, StringsAndSnapshotTimeAreBounded) {
  test::PythonTarget target("/usr/bin/ruby", kScript);
  ASSERT_TRUE(target.wait_ready());
  WalkLimits limits;
  limits.max_string = 5;
  auto attached = RubySampler::attach(target.pid(), "/proc", limits);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<RubySampler>>(attached));
  std::vector<RubyThreadSample> threads;
  ASSERT_EQ(std::get<std::unique_ptr<RubySampler>>(attached)->sample(threads, 10), WalkStatus::ok);
  size_t frames = 0;
  for (const auto& t : threads) {
    for (const auto& f : t.frames) {
      EXPECT_LE(f.label.size(), 5u);
      EXPECT_LE(f.path.size(), 5u);
      ++frames;
    }
  }
  EXPECT_GT(frames, 20u);
  // No time at all for a snapshot: it is given up as torn, never finished late.
  limits = WalkLimits{};
  limits.max_snapshot_time = std::chrono::milliseconds(0);
  attached = RubySampler::attach(target.pid(), "/proc", limits);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<RubySampler>>(attached));
  auto& sampler = *std::get<std::unique_ptr<RubySampler>>(attached);
  EXPECT_EQ(sampler.sample(threads, 2), WalkStatus::torn);
  EXPECT_EQ(sampler.last_torn_reason(), "snapshot over its time budget");
  EXPECT_EQ(sampler.stats().given_up, 1u);
}

TEST(RuntimeRubyWalker, AProcessThatExitsIsGone) {
  test::PythonTarget target("/usr/bin/ruby", kScript);
  ASSERT_TRUE(target.wait_ready());
  auto sampler = attach(target.pid());
  ASSERT_NE(sampler, nullptr);
  target.stop();
  std::vector<RubyThreadSample> threads;
  EXPECT_EQ(sampler->sample(threads), WalkStatus::gone);
}

// The address of the control frame `above_leaf` frames above the leaf of the thread `tid`,
// found through the same symbols the sampler uses.
uint64_t control_frame_of(pid_t pid, int32_t tid, size_t above_leaf) {
  auto maps = remote::read_maps(pid);
  if (!maps) return 0;
  auto* m =
      remote::lowest_mapping(*maps, [](std::string_view n) { return n.starts_with("libruby"); });
  if (m == nullptr) return 0;
  auto syms = remote::mapped_symbols(pid, *m, {"ruby_current_vm_ptr"});
  if (!syms || !syms->address("ruby_current_vm_ptr")) return 0;
  auto layout = *layout_for_version({3, 1, 0});
  remote::RemoteMemory mem(pid);
  uint64_t vm = 0, ractor = 0, node = 0;
  mem.read_value(*syms->address("ruby_current_vm_ptr"), vm);
  mem.read_value(vm + layout.vm_main_ractor, ractor);
  uint64_t head = ractor + layout.threads_head;
  mem.read_value(head, node);
  for (int i = 0; i < 64 && node != head && node != 0; ++i) {
    int32_t t = 0;
    uint64_t ec = 0, cfp = 0;
    mem.read_value(node + layout.thread_tid, t);
    mem.read_value(node + layout.thread_ec, ec);
    if (t == tid && mem.read_value(ec + layout.ec_cfp, cfp))
      return cfp + above_leaf * layout.cfp_size;
    mem.read_value(node, node);
  }
  return 0;
}

bool poke(pid_t pid, uint64_t address, uint64_t value) {
  int fd = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDWR);
  if (fd < 0) return false;
  bool ok = pwrite(fd, &value, sizeof value, static_cast<off_t>(address)) == sizeof value;
  close(fd);
  return ok;
}

TEST(RuntimeRubyWalker, ACorruptedFrameChainIsTornNeverInvented) {
  test::PythonTarget target("/usr/bin/ruby", kScript);
  ASSERT_TRUE(target.wait_ready());
  auto expected = read_expected(target.snapshot_path());
  ASSERT_FALSE(expected.empty());
  auto sampler = attach(target.pid());
  ASSERT_NE(sampler, nullptr);
  // The "deep" thread parks in sleep (a C frame) under park (a Ruby frame): point park's
  // iseq at garbage, then at an object that is not an iseq.
  int32_t tid = expected[0].tid;
  uint64_t cfp = control_frame_of(target.pid(), tid, 1);
  ASSERT_NE(cfp, 0u);
  auto layout = *layout_for_version({3, 1, 0});
  uint64_t iseq_field = cfp + layout.cfp_iseq;
  for (uint64_t garbage : {uint64_t{0x10}, uint64_t{0xdead0000}, cfp /* a stack address */}) {
    SCOPED_TRACE(garbage);
    ASSERT_TRUE(poke(target.pid(), iseq_field, garbage));
    std::vector<RubyThreadSample> threads;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(sampler->sample(threads, 3), WalkStatus::torn);
    EXPECT_FALSE(sampler->last_torn_reason().empty());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
  // The session goes on: the adapter turns every torn snapshot into the process's error frame.
  Target t;
  t.pid = target.pid();
  t.runtime = Runtime::ruby;
  SessionParams params;
  params.duration = std::chrono::milliseconds(500);
  params.frequency_hz = 20;
  Profile p = make_gp_ruby_adapter()->profile(t, params, {});
  EXPECT_TRUE(p.stacks.empty());
  EXPECT_TRUE(p.error_frame.starts_with("[Profiling error: no Ruby stack could be read ("))
      << p.error_frame;
}

TEST(RuntimeRubyWalker, ANonRubyProcessIsNotRuby) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto attached = RubySampler::attach(child);
  auto* failure = std::get_if<AttachFailure>(&attached);
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->kind, AttachFailure::Kind::not_ruby);
  EXPECT_EQ(failure->reason, "no ruby executable or libruby is mapped");
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace gp::runtime::ruby
