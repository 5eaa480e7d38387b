// The session driver: real target processes, adapters whose behaviour the test sets (stacks,
// hang, throw), archive tables checked through gp-fold's folding; the work directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>

#include "gp/fold/stacks.h"
#include "gp/runtime/discovery.h"
#include "gp/runtime/driver.h"
#include "gp/runtime/work_dir.h"
#include "runtime_core_support.h"

namespace gp::runtime {
namespace {

using namespace std::chrono_literals;
using test::DetachedProcess;

// Sleeps until stop or the duration, then reports what a Python profiler would: frames with
// file and first line, so gp-fold composes "name (file:line)".
class WaitingAdapter : public Adapter {
 public:
  std::string_view name() const override { return "test-waiting"; }
  Runtime runtime() const override { return Runtime::python; }
  std::string unavailable_reason() const override { return {}; }
  Profile profile(const Target& t, const SessionParams& p, std::stop_token stop) override {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, p.duration, [] { return false; });
    Profile out;
    Stack s;
    s.frames = {{model::FrameKind::python, "<module>", "/srv/app.py", 1, 3, {}},
                {model::FrameKind::python, "work", "/srv/app.py", 10, 12, {}}};
    s.tid = t.pid;
    s.thread_name = "MainThread";
    s.count = 7;
    out.stacks.push_back(s);
    out.app_metadata_json = "{\"mode\": \"" + p.mode + "\"}";
    return out;
  }
};

// Ignores stop (a profiler that hangs).
class HangingAdapter : public WaitingAdapter {
 public:
  std::string_view name() const override { return "test-hanging"; }
  Profile profile(const Target&, const SessionParams&, std::stop_token) override {
    std::this_thread::sleep_for(10s);
    return {};
  }
};

class ThrowingAdapter : public WaitingAdapter {
 public:
  std::string_view name() const override { return "test-throwing"; }
  Profile profile(const Target&, const SessionParams&, std::stop_token) override {
    throw std::runtime_error("boom");
  }
};

std::unique_ptr<Adapter> waiting() { return std::make_unique<WaitingAdapter>(); }
std::unique_ptr<Adapter> hanging() { return std::make_unique<HangingAdapter>(); }
std::unique_ptr<Adapter> throwing() { return std::make_unique<ThrowingAdapter>(); }

DriverOptions options_for(std::vector<pid_t> pids, std::span<const AdapterEntry> table) {
  DriverOptions o;
  o.modes = {{Runtime::python, "gp"}, {Runtime::ruby, "rbspy"}};
  o.pids = std::move(pids);
  o.duration = 1500ms;
  o.grace = 1s;
  o.app_metadata = false;
  o.adapters = table;
  return o;
}

std::vector<std::string> folded(const model::Session& s) {
  model::Archive a;
  a.sessions.push_back(s);
  std::vector<std::string> lines;
  for (const auto& st : fold::fold_stacks(a, {})) {
    std::string line;
    for (const auto& f : st.frames)
      line += (line.empty() ? "" : ";") + f.name + fold::kind_suffix(f.kind);
    lines.push_back(line + " " + std::to_string(st.count));
  }
  return lines;
}

const TargetReport* report_of(const DriverResult& r, pid_t pid) {
  for (const auto& t : r.targets) {
    if (t.pid == pid) return &t;
  }
  return nullptr;
}

TEST(RuntimeDriver, ProfilesTargetsIntoARuntimeSession) {
  char dir[] = "/tmp/gp-driver-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::ofstream(std::string(dir) + "/app.py") << "import time\ntime.sleep(60)\n";
  DetachedProcess py({test::system_python(), "app.py"}, dir);
  DetachedProcess rb({"ruby", "-e", "sleep 60"});
  ASSERT_TRUE(py.wait_for_map("python3"));
  ASSERT_TRUE(rb.wait_for_map("libruby"));
  const AdapterEntry table[] = {{Runtime::python, "gp", waiting}};
  auto o = options_for({py.pid(), rb.pid()}, table);
  o.app_metadata = true;
  auto r = run_session(o, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->session.header.source, model::SourceKind::runtime);
  EXPECT_EQ(::access(r->work_dir.c_str(), F_OK), -1) << "work dir left behind";
  ASSERT_EQ(r->targets.size(), 2u);
  const TargetReport* p = report_of(*r, py.pid());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->samples, 7u);
  EXPECT_EQ(p->adapter, "test-waiting");
  EXPECT_EQ(p->appid, "python: app.py (" + std::string(dir) + "/app.py)");
  const TargetReport* b = report_of(*r, rb.pid());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->error_frame,
            "[Profiling skipped: ruby mode 'rbspy' is not available in this build]");
  EXPECT_TRUE(b->skipped());
  const model::Process* proc = r->session.find_process(py.pid());
  ASSERT_NE(proc, nullptr);
  EXPECT_EQ(proc->runtime, "python");
  EXPECT_NE(proc->app_metadata_json.find("\"exe\": \"/usr/bin/python3.11\""), std::string::npos)
      << proc->app_metadata_json;
  auto lines = folded(r->session);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "python3;<module> (/srv/app.py:1)_[p];work (/srv/app.py:10)_[p] 7"),
            lines.end());
  EXPECT_NE(
      std::find(lines.begin(), lines.end(),
                "ruby;[Profiling skipped: ruby mode 'rbspy' is not available in this build] 1"),
      lines.end());
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

TEST(RuntimeDriver, AHungAdapterDoesNotHoldTheSession) {
  DetachedProcess py({test::system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(py.wait_for_map("python3"));
  const AdapterEntry table[] = {{Runtime::python, "gp", hanging}};
  auto o = options_for({py.pid()}, table);
  o.duration = 500ms;
  o.grace = 300ms;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_session(o, {});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 8s) << "the session waited for the hung adapter";
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->abandoned_threads);
  ASSERT_EQ(r->targets.size(), 1u);
  EXPECT_TRUE(r->targets[0].hung);
  EXPECT_TRUE(r->targets[0].failed());
  EXPECT_EQ(r->targets[0].error_frame,
            "[Profiling error: test-hanging did not return within 0.3 s after the session ended]");
  EXPECT_EQ(r->session.find_process(py.pid())->error_frame, r->targets[0].error_frame);
}

TEST(RuntimeDriver, AnAdapterExceptionBecomesAnErrorFrame) {
  DetachedProcess py({test::system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(py.wait_for_map("python3"));
  const AdapterEntry table[] = {{Runtime::python, "gp", throwing}};
  auto r = run_session(options_for({py.pid()}, table), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->targets.size(), 1u);
  EXPECT_EQ(r->targets[0].error_frame, "[Profiling error: exception boom]");
}

TEST(RuntimeDriver, StopEndsTheSessionEarlyWithResults) {
  DetachedProcess py({test::system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(py.wait_for_map("python3"));
  const AdapterEntry table[] = {{Runtime::python, "gp", waiting}};
  auto o = options_for({py.pid()}, table);
  o.duration = std::nullopt;  // until stopped
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(700ms);
    stop.request_stop();
  });
  auto r = run_session(o, stop.get_token());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->stopped);
  ASSERT_EQ(r->targets.size(), 1u);
  EXPECT_EQ(r->targets[0].samples, 7u);
}

TEST(RuntimeDriver, ProcessesStartedDuringTheSessionAreProfiled) {
  DetachedProcess before({test::system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(before.wait_for_map("python3"));
  const AdapterEntry table[] = {{Runtime::python, "gp", waiting}};
  auto o = options_for({}, table);
  o.modes = {{Runtime::python, "gp"}};
  o.duration = 4s;
  o.rescan_interval = 200ms;
  std::atomic<bool> first_seen{false};
  pid_t before_pid = before.pid();
  o.on_start = [&](const TargetReport& t) {
    if (t.pid == before_pid) first_seen = true;
  };
  std::optional<DetachedProcess> later;
  std::jthread starter([&] {
    while (!first_seen) std::this_thread::sleep_for(20ms);
    later.emplace(
        std::vector<std::string>{test::system_python(), "-c", "import time; time.sleep(60)"});
  });
  auto r = run_session(o, {});
  starter.join();
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(later.has_value());
  EXPECT_NE(report_of(*r, before_pid), nullptr);
  const TargetReport* spawned = report_of(*r, later->pid());
  ASSERT_NE(spawned, nullptr) << "a process started mid-session was not profiled";
  EXPECT_EQ(spawned->samples, 7u);
}

TEST(RuntimeDriver, ErrorProfileFoldsAsGprofilerErrorStack) {
  model::Session s;
  model::SessionBuilder b(s);
  model::Process p;
  p.pid = 42;
  p.comm = "java";
  Profile err;
  err.error_frame = error_frame("process went down during profiling");
  EXPECT_EQ(add_profile(b, p, err), 0u);
  EXPECT_EQ(s.find_process(42)->error_frame, err.error_frame);
  EXPECT_EQ(folded(s), std::vector<std::string>{
                           "java;[Profiling error: process went down during profiling] 1"});
}

TEST(RuntimeDriver, StacksKeepKindsAndThreads) {
  model::Session s;
  model::SessionBuilder b(s);
  model::Process p;
  p.pid = 7;
  p.comm = "java";
  Profile prof;
  prof.stacks.push_back({{{model::FrameKind::java, "Main.main([Ljava/lang/String;)V", "", 0, 0, {}},
                          {model::FrameKind::java, "Main.work()V", "", 0, 0, {}}},
                         0,
                         "",
                         3});
  prof.stacks.push_back({{{model::FrameKind::native, "start_thread", "", 0, 0, {}},
                          {model::FrameKind::kernel, "do_syscall_64", "", 0, 0, {}}},
                         9,
                         "GC Thread",
                         2});
  EXPECT_EQ(add_profile(b, p, prof), 5u);
  auto lines = folded(s);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines,
            (std::vector<std::string>{"java;Main.main([Ljava/lang/String;)V_[j];Main.work()V_[j] 3",
                                      "java;start_thread;do_syscall_64_[k] 2"}));
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.samples[0].tid, 7) << "tid 0 means the main thread";
  EXPECT_EQ(s.samples[1].tid, 9);
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].comm, "GC Thread");
}

TEST(RuntimeWorkDir, PrivateAndRemovedWithoutFollowingLinks) {
  char outside[] = "/tmp/gp-outside-XXXXXX";
  ASSERT_NE(::mkdtemp(outside), nullptr);
  std::ofstream(std::string(outside) + "/keep") << "x";
  std::string path;
  {
    auto w = WorkDir::create("");
    ASSERT_TRUE(w.ok());
    path = w->path();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::string sub = w->subdir("123");
    ASSERT_FALSE(sub.empty());
    std::ofstream(sub + "/out.jfr") << "data";
    ASSERT_EQ(::symlink(outside, (sub + "/link").c_str()), 0);
  }
  EXPECT_EQ(::access(path.c_str(), F_OK), -1);
  EXPECT_EQ(::access((std::string(outside) + "/keep").c_str(), F_OK), 0);
  std::system(("rm -rf '" + std::string(outside) + "'").c_str());
}

TEST(RuntimeWorkDir, ALaterRunRemovesWhatKilledRunsLeftAndOnlyThat) {
  char parent_buf[] = "/tmp/gp-parent-XXXXXX";
  ASSERT_NE(::mkdtemp(parent_buf), nullptr);
  std::string parent = parent_buf;
  auto make = [&](const std::string& name, const std::string& owner) {
    std::string dir = parent + "/" + name;
    EXPECT_EQ(::mkdir(dir.c_str(), 0700), 0);
    if (!owner.empty()) std::ofstream(dir + "/owner") << owner;
    std::ofstream(dir + "/out.jfr") << "data";
    return dir;
  };
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a pid whose process is gone
  auto self = read_stat(::getpid());
  ASSERT_TRUE(self);
  std::string dead = make("gp-runtime-dead01", std::to_string(child) + " 1");
  std::string reused = make("gp-runtime-reuse1", std::to_string(::getpid()) + " " +
                                                     std::to_string(self->start_ticks + 1));
  std::string live = make("gp-runtime-live01",
                          std::to_string(::getpid()) + " " + std::to_string(self->start_ticks));
  std::string unproven = make("gp-runtime-noown1", "");
  std::string other = make("gp-profile-dead01", std::to_string(child) + " 1");
  ASSERT_EQ(::symlink(dead.c_str(), (parent + "/gp-runtime-link01").c_str()), 0);

  EXPECT_EQ(WorkDir::remove_stale(parent), 2u);
  EXPECT_EQ(::access(dead.c_str(), F_OK), -1);
  EXPECT_EQ(::access(reused.c_str(), F_OK), -1);
  EXPECT_EQ(::access(live.c_str(), F_OK), 0);
  EXPECT_EQ(::access(unproven.c_str(), F_OK), 0);
  EXPECT_EQ(::access(other.c_str(), F_OK), 0);
  // A new run proves its own directory: the next run keeps it while this process lives.
  {
    auto w = WorkDir::create(parent);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(WorkDir::remove_stale(parent), 0u);
    EXPECT_EQ(::access(w->path().c_str(), F_OK), 0);
  }
  // gp-profile's directories: the same rule under their own prefix.
  {
    auto w = WorkDir::create(parent, "gp-profile-");
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->path().rfind(parent + "/gp-profile-", 0), 0u);
    EXPECT_EQ(::access(other.c_str(), F_OK), -1);  // the dead one went when it was made
    EXPECT_EQ(WorkDir::remove_stale(parent, "gp-profile-"), 0u);
    EXPECT_EQ(::access(w->path().c_str(), F_OK), 0);
  }
  std::system(("rm -rf '" + parent + "'").c_str());
}

// A process about to die by a signal removes what destructors would have.
TEST(RuntimeWorkDir, RemoveLiveRemovesEveryDirectoryStillThere) {
  auto w = WorkDir::create("");
  ASSERT_TRUE(w.ok());
  std::string path = w->path();
  std::ofstream(path + "/out.jfr") << "data";
  int calls = 0;
  uint64_t kept = WorkDir::register_live([&] { ++calls; });
  uint64_t dropped = WorkDir::register_live([&] { calls += 100; });
  WorkDir::unregister_live(dropped);
  WorkDir::remove_live();
  EXPECT_EQ(::access(path.c_str(), F_OK), -1);
  EXPECT_EQ(calls, 1);
  WorkDir::remove_live();  // once only
  EXPECT_EQ(calls, 1);
  WorkDir::unregister_live(kept);  // already gone: harmless
}

}  // namespace
}  // namespace gp::runtime
