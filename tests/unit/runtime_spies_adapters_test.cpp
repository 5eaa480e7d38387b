// The rbspy, phpspy and dotnet-trace adapters against real target processes, with a stand-in
// tool first on PATH (tests/fixtures/runtime/spies/fake-*): the stand-in fails loudly unless gp
// passes gProfiler's exact argument list, then writes the tool's documented output where the
// real tool writes it. The real tools are not installable on the build machines; these tests
// show gp runs them as gProfiler does and reads what they document they write.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gp/runtime/adapters.h"

extern char** environ;

namespace gp::runtime {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kFixtures = std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/spies/";

std::string make_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "gp-spies-XXXXXX").string();
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A stand-in tool in a directory of its own, first on PATH while the object lives.
class FakeTool {
 public:
  explicit FakeTool(const std::string& tool) : dir_(make_temp_dir()), old_path_(getenv("PATH")) {
    fs::copy_file(kFixtures + "fake-" + tool, dir_ + "/" + tool);
    fs::copy_file(kFixtures + "fake_tool.bash", dir_ + "/fake_tool.bash");
    ::setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
  }
  ~FakeTool() {
    ::setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }

  void configure(const std::vector<std::string>& expect, const std::string& mode,
                 const std::string& output, pid_t target) {
    std::ofstream conf(dir_ + "/fake.conf");
    conf << "EXPECT=(";
    for (const auto& a : expect) conf << quoted(a) << ' ';
    conf << ")\nMODE=" << mode << "\nOUTPUT=" << quoted(output) << "\nTARGET=" << target << "\n";
  }
  // Set when the stand-in refused gp's arguments.
  std::string failure() const {
    std::ifstream in(dir_ + "/fake.failed");
    std::string s;
    std::getline(in, s);
    return s;
  }

 private:
  std::string dir_;
  std::string old_path_;
};

// A real process to profile, killed and reaped at the end.
class Child {
 public:
  explicit Child(std::vector<std::string> argv) {
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    EXPECT_EQ(::posix_spawnp(&pid_, args[0], nullptr, nullptr, args.data(), environ), 0);
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
};

struct Session {
  Session() : work(make_temp_dir()) {}
  ~Session() { fs::remove_all(work); }
  SessionParams params(int hz, milliseconds duration) const {
    SessionParams p;
    p.frequency_hz = hz;
    p.duration = duration;
    p.work_dir = work;
    return p;
  }
  bool work_is_empty() const { return fs::is_empty(work); }
  std::string work;
};

Target target_of(pid_t pid, Runtime runtime) {
  Target t;
  t.pid = pid;
  t.runtime = runtime;
  t.root = "/proc/" + std::to_string(pid) + "/root";
  return t;
}

std::string names(const Stack& st) {
  std::string s;
  for (const Frame& f : st.frames) s += (s.empty() ? "" : ";") + f.name;
  return s;
}

std::vector<std::string> rbspy_args(int hz, int seconds, pid_t pid) {
  return {"record",           "--silent", "-r",
          std::to_string(hz), "-d",       std::to_string(seconds),
          "--nonblocking",    "--oncpu",  "--format=collapsed",
          "--file",           "*",        "--raw-file",
          "/dev/null",        "-p",       std::to_string(pid)};
}

// --- rbspy ---------------------------------------------------------------------------------

TEST(RbspyAdapter, RunsGprofilersCommandOnALiveRubyAndReadsItsCollapsedFile) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  // 500 Hz asked, rbspy gets gProfiler's cap of 100; the 2.4 s left → "-d 2".
  fake.configure(rbspy_args(100, 2, ruby.pid()), "ok", kFixtures + "rbspy_collapsed.txt",
                 ruby.pid());
  auto adapter = make_rbspy_adapter();
  EXPECT_EQ(adapter->unavailable_reason(), "");
  EXPECT_EQ(adapter->runtime(), Runtime::ruby);
  Profile p = adapter->profile(target_of(ruby.pid(), Runtime::ruby),
                               session.params(500, milliseconds(2400)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.error_frame, "");
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
  ASSERT_EQ(p.stacks.size(), 3u);
  EXPECT_EQ(names(p.stacks[0]),
            "<main> - /app/server.rb:30;block in serve - /app/server.rb:12;"
            "Handler#call - /app/handler.rb:8;fib - /app/fib.rb:3");
  EXPECT_EQ(p.stacks[0].count, 7u);
  EXPECT_EQ(p.stacks[0].frames.back().kind, model::FrameKind::ruby);
  EXPECT_EQ(p.stacks[0].frames.back().file, "/app/fib.rb");
  EXPECT_EQ(p.stacks[0].frames.back().line, 3u);
  EXPECT_TRUE(session.work_is_empty());  // the output file is removed
}

TEST(RbspyAdapter, LowFrequencyAndShortSessionPassThrough) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  fake.configure(rbspy_args(11, 1, ruby.pid()), "ok", kFixtures + "rbspy_collapsed.txt",
                 ruby.pid());
  Profile p = make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                            session.params(11, milliseconds(300)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.stacks.size(), 3u) << p.error_frame;
}

TEST(RbspyAdapter, MalformedOutputLinesBecomeOneWarning) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  std::string bad = session.work + "-bad.txt";
  std::ofstream(bad) << "a - x.rb:1;b - y.rb:2 4\nnocount\nc - z.rb:3 x\n";
  fake.configure(rbspy_args(11, 1, ruby.pid()), "ok", bad, ruby.pid());
  Profile p = make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                            session.params(11, milliseconds(1000)), {});
  fs::remove(bad);
  ASSERT_EQ(p.stacks.size(), 1u) << p.error_frame;
  EXPECT_EQ(p.stacks[0].count, 4u);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "rbspy output: skipped 2 malformed parts (first: line 2: no sample count)");
}

// The stand-in's check is what the tests above rely on: a command that differs from
// gProfiler's in one argument is refused, and the refusal reaches the error frame.
TEST(RbspyAdapter, StandInRefusesACommandThatDiffersFromGprofilers) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  fake.configure(rbspy_args(100, 1, ruby.pid()), "ok", kFixtures + "rbspy_collapsed.txt",
                 ruby.pid());
  Profile p = make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                            session.params(50, milliseconds(1000)), {});
  EXPECT_EQ(fake.failure(), "argument 4 is '50', expected '100'");
  EXPECT_EQ(p.error_frame,
            "[Profiling error: rbspy exited with status 97: fake rbspy: argument "
            "4 is '50', expected '100']");
  EXPECT_TRUE(p.stacks.empty());
}

TEST(RbspyAdapter, MissingToolIsASkipFrameSayingWhereGpLooked) {
  std::string empty = make_temp_dir();
  std::string old_path = getenv("PATH");
  ::setenv("PATH", empty.c_str(), 1);
  auto adapter = make_rbspy_adapter();
  ::setenv("PATH", old_path.c_str(), 1);
  fs::remove_all(empty);
  const std::string why =
      "rbspy is not installed (not on PATH, nor in /root/.cargo/bin, /usr/local/bin, "
      "/opt/rbspy/bin, /opt/gprofiler/ruby)";
  EXPECT_EQ(adapter->unavailable_reason(), why);
  Session session;
  Profile p = adapter->profile(target_of(::getpid(), Runtime::ruby),
                               session.params(11, milliseconds(1000)), {});
  EXPECT_EQ(p.error_frame, "[Profiling skipped: " + why + "]");
  EXPECT_TRUE(p.stacks.empty());
}

TEST(RbspyAdapter, CrashingToolGivesAnErrorFrameWithItsReason) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  fake.configure(rbspy_args(11, 1, ruby.pid()), "crash", "", ruby.pid());
  Profile p = make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                            session.params(11, milliseconds(1000)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.error_frame,
            "[Profiling error: rbspy exited with status 1: Error: failed to attach "
            "to process " +
                std::to_string(ruby.pid()) + ": Operation not permitted (os error 1)]");
  EXPECT_TRUE(p.stacks.empty());
}

TEST(RbspyAdapter, HangingToolIsKilledAtTheTimeout) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  fake.configure(rbspy_args(11, 1, ruby.pid()), "hang", "", ruby.pid());
  auto start = std::chrono::steady_clock::now();
  Profile p = make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                            session.params(11, milliseconds(1000)), {});
  auto took = std::chrono::steady_clock::now() - start;
  // gProfiler's timeout: duration + 10 s.
  EXPECT_GE(took, std::chrono::seconds(11));
  EXPECT_LT(took, std::chrono::seconds(30));
  EXPECT_EQ(p.error_frame, "[Profiling error: rbspy timed out after 11 s]");
}

TEST(RbspyAdapter, TargetExitingMidSessionIsProcessWentDown) {
  Child ruby({"ruby", "-e", "sleep 0.3"});
  FakeTool fake("rbspy");
  Session session;
  fake.configure(rbspy_args(11, 2, ruby.pid()), "wait-target", "", ruby.pid());
  Profile p = make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                            session.params(11, milliseconds(2000)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.error_frame, "[Profiling error: process went down during profiling]");
}

TEST(RbspyAdapter, StopRequestEndsAHangingRunEarly) {
  Child ruby({"ruby", "-e", "loop { 2 ** 64 }"});
  FakeTool fake("rbspy");
  Session session;
  fake.configure(rbspy_args(11, 30, ruby.pid()), "hang", "", ruby.pid());
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));
    stop.request_stop();
  });
  auto start = std::chrono::steady_clock::now();
  Profile p =
      make_rbspy_adapter()->profile(target_of(ruby.pid(), Runtime::ruby),
                                    session.params(11, milliseconds(30000)), stop.get_token());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_TRUE(p.error_frame.starts_with("[Profiling error: rbspy ")) << p.error_frame;
  EXPECT_TRUE(session.work_is_empty());
}

// --- phpspy --------------------------------------------------------------------------------
// No PHP is installed here: any live process stands in as the target (phpspy itself is the
// stand-in, so what runs in the target does not matter to these tests).

std::vector<std::string> phpspy_args(int hz, int ms, pid_t pid) {
  return {"--verbose-fields=p",
          "-p",
          std::to_string(pid),
          "-H",
          std::to_string(hz),
          "-b",
          "16384",
          "-i",
          std::to_string(ms),
          "--output",
          "*"};
}

TEST(PhpspyAdapter, RunsPhpspyOnTheProcessAndKeepsItsPidBlocks) {
  Child target({"sleep", "30"});
  FakeTool fake("phpspy");
  Session session;
  // 5000 Hz asked: phpspy gets gProfiler's cap of 999.
  fake.configure(phpspy_args(999, 3000, target.pid()), "ok", kFixtures + "phpspy_output.txt",
                 target.pid());
  auto adapter = make_phpspy_adapter();
  EXPECT_EQ(adapter->unavailable_reason(), "");
  EXPECT_EQ(adapter->runtime(), Runtime::php);
  Profile p = adapter->profile(target_of(target.pid(), Runtime::php),
                               session.params(5000, milliseconds(3000)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.error_frame, "");
  ASSERT_EQ(p.stacks.size(), 2u);
  EXPECT_EQ(names(p.stacks[0]),
            "<main> /var/www/htdocs/index.php:5;"
            "Cache_Memcached::get /var/www/lib/Cache/Memcached.php:251;usleep <internal>:-1");
  EXPECT_EQ(p.stacks[0].count, 2u);
  EXPECT_EQ(p.stacks[0].frames[1].kind, model::FrameKind::php);
  EXPECT_EQ(p.stacks[0].frames[1].line, 251u);
  EXPECT_EQ(p.stacks[1].count, 1u);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "phpspy output: dropped 1 traces of processes other than " +
                               std::to_string(target.pid()));
  EXPECT_TRUE(session.work_is_empty());
}

TEST(PhpspyAdapter, CrashingToolGivesAnErrorFrame) {
  Child target({"sleep", "30"});
  FakeTool fake("phpspy");
  Session session;
  fake.configure(phpspy_args(11, 1000, target.pid()), "crash", "", target.pid());
  Profile p = make_phpspy_adapter()->profile(target_of(target.pid(), Runtime::php),
                                             session.params(11, milliseconds(1000)), {});
  EXPECT_TRUE(p.error_frame.starts_with("[Profiling error: phpspy exited with status 1: Error: "))
      << p.error_frame;
}

TEST(PhpspyAdapter, TargetExitingMidSessionIsProcessWentDown) {
  Child target({"sleep", "0.3"});
  FakeTool fake("phpspy");
  Session session;
  fake.configure(phpspy_args(11, 2000, target.pid()), "wait-target", "", target.pid());
  Profile p = make_phpspy_adapter()->profile(target_of(target.pid(), Runtime::php),
                                             session.params(11, milliseconds(2000)), {});
  EXPECT_EQ(p.error_frame, "[Profiling error: process went down during profiling]");
}

// --- dotnet-trace --------------------------------------------------------------------------

std::vector<std::string> dotnet_args(const std::string& duration, pid_t nspid) {
  return {"collect",   "--format",     "speedscope", "--process-id", std::to_string(nspid),
          "--profile", "cpu-sampling", "--duration", duration,       "--output",
          "*"};
}

TEST(DotnetTraceAdapter, RunsGprofilersCommandAndReadsTheSpeedscopeFile) {
  Child target({"sleep", "30"});
  FakeTool fake("dotnet-trace");
  Session session;
  fake.configure(dotnet_args("0:00:02", target.pid()), "ok",
                 kFixtures + "dotnet_trace.speedscope.json", target.pid());
  auto adapter = make_dotnet_trace_adapter();
  EXPECT_EQ(adapter->unavailable_reason(), "");
  EXPECT_EQ(adapter->runtime(), Runtime::dotnet);
  Profile p = adapter->profile(target_of(target.pid(), Runtime::dotnet),
                               session.params(100, milliseconds(2000)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.error_frame, "");
  ASSERT_EQ(p.stacks.size(), 4u);
  EXPECT_EQ(p.stacks[0].count, 5u);
  EXPECT_EQ(p.stacks[0].tid, 4242);
  EXPECT_EQ(p.stacks[0].frames[0].name, "MyApp!MyApp.Program.Main(class System.String[])");
  EXPECT_EQ(p.stacks[0].frames[0].kind, model::FrameKind::dotnet);
  EXPECT_TRUE(session.work_is_empty());
}

TEST(DotnetTraceAdapter, DurationIsWrittenAsPythonsTimedelta) {
  Child target({"sleep", "30"});
  FakeTool fake("dotnet-trace");
  Session session;
  fake.configure(dotnet_args("1:02:05", target.pid()), "ok",
                 kFixtures + "dotnet_trace.speedscope.json", target.pid());
  Profile p = make_dotnet_trace_adapter()->profile(target_of(target.pid(), Runtime::dotnet),
                                                   session.params(100, milliseconds(3725400)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.stacks.size(), 4u) << p.error_frame;
}

TEST(DotnetTraceAdapter, OpenEndedSessionTracesForUpToADay) {
  Child target({"sleep", "30"});
  FakeTool fake("dotnet-trace");
  Session session;
  fake.configure(dotnet_args("23:59:59", target.pid()), "ok",
                 kFixtures + "dotnet_trace.speedscope.json", target.pid());
  Profile p = make_dotnet_trace_adapter()->profile(
      target_of(target.pid(), Runtime::dotnet), session.params(100, std::chrono::hours(8760)), {});
  EXPECT_EQ(fake.failure(), "");
  EXPECT_EQ(p.stacks.size(), 4u) << p.error_frame;
}

TEST(DotnetTraceAdapter, MissingToolIsASkipFrame) {
  std::string empty = make_temp_dir();
  std::string old_path = getenv("PATH");
  ::setenv("PATH", empty.c_str(), 1);
  auto adapter = make_dotnet_trace_adapter();
  ::setenv("PATH", old_path.c_str(), 1);
  fs::remove_all(empty);
  EXPECT_TRUE(adapter->unavailable_reason().starts_with(
      "dotnet-trace is not installed (not on PATH, nor in /root/.dotnet/tools, "))
      << adapter->unavailable_reason();
}

TEST(DotnetTraceAdapter, CrashingToolGivesAnErrorFrame) {
  Child target({"sleep", "30"});
  FakeTool fake("dotnet-trace");
  Session session;
  fake.configure(dotnet_args("0:00:01", target.pid()), "crash", "", target.pid());
  Profile p = make_dotnet_trace_adapter()->profile(target_of(target.pid(), Runtime::dotnet),
                                                   session.params(11, milliseconds(1000)), {});
  EXPECT_TRUE(
      p.error_frame.starts_with("[Profiling error: dotnet-trace exited with status 1: Error: "))
      << p.error_frame;
}

}  // namespace
}  // namespace gp::runtime
