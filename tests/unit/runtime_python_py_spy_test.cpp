// The py-spy adapter: parsing py-spy's raw output (fixtures written from py-spy's documented
// format and gProfiler's fork suffixes), and running "py-spy" from PATH with gProfiler's exact
// arguments. py-spy itself is not packaged for Debian, so the run tests put a small script in
// its place (tests/fixtures/runtime/python/fake-py-spy.sh) that checks every argument gp
// passes and prints documented output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gp/runtime/adapters.h"
#include "runtime/python/py_spy_output.h"

namespace gp::runtime::python {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/python/" + name;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RuntimePythonPySpy, ParsesRawOutput) {
  auto parsed = parse_py_spy_output(read_all(fixture("py_spy_raw.txt")));
  EXPECT_EQ(parsed.bad_lines, 0u);
  ASSERT_EQ(parsed.stacks.size(), 4u);
  const Stack& s = parsed.stacks[0];
  EXPECT_EQ(s.count, 31u);
  ASSERT_EQ(s.frames.size(), 4u);
  EXPECT_EQ(s.frames[0].name, "<module>");  // root first, as py-spy prints
  EXPECT_EQ(s.frames[3].name, "compute");
  EXPECT_EQ(s.frames[3].file, "/srv/app/work.py");
  EXPECT_EQ(s.frames[3].start_line, 3u);
  EXPECT_EQ(s.frames[3].kind, model::FrameKind::python);
  // A path with a space and a qualified name survive.
  const Frame& init = parsed.stacks[3].frames[3];
  EXPECT_EQ(init.name, "Point.__init__");
  EXPECT_EQ(init.file, "/srv/app/geo types.py");
  EXPECT_EQ(init.start_line, 8u);
  EXPECT_EQ(parsed.stacks[3].frames[2].name, "<listcomp>");
}

TEST(RuntimePythonPySpy, ParsesGranulateForkSuffixes) {
  auto parsed = parse_py_spy_output(read_all(fixture("py_spy_raw_fork.txt")));
  ASSERT_EQ(parsed.stacks.size(), 2u);
  const Frame& py = parsed.stacks[0].frames[2];
  EXPECT_EQ(py.name, "compute");
  EXPECT_EQ(py.file, "/srv/app/work.py");
  EXPECT_EQ(py.kind, model::FrameKind::python);
  const Frame& native = parsed.stacks[1].frames[2];
  EXPECT_EQ(native.name, "crc32");
  EXPECT_EQ(native.file, "zlib.cpython-311-x86_64-linux-gnu.so");
  EXPECT_EQ(native.start_line, 0u);
  EXPECT_EQ(native.kind, model::FrameKind::python_native);
}

TEST(RuntimePythonPySpy, FrameShapesAndBadLines) {
  Frame bare = parse_py_spy_frame("select");
  EXPECT_EQ(bare.name, "select");
  EXPECT_TRUE(bare.file.empty());
  Frame thread = parse_py_spy_frame("thread (0x7F12AB)");
  EXPECT_EQ(thread.kind, model::FrameKind::pseudo);
  EXPECT_EQ(thread.name, "thread (0x7F12AB)");
  Frame process = parse_py_spy_frame("process 4242:\"python3 app.py\"");
  EXPECT_EQ(process.name, "process 4242:\"python3 app.py\"");
  auto parsed = parse_py_spy_output("a (x.py:1);b (x.py:5) 3\nno count here\nc (y.py:2) 0\n\n");
  EXPECT_EQ(parsed.stacks.size(), 1u);
  EXPECT_EQ(parsed.bad_lines, 2u);
}

TEST(RuntimePythonPySpy, CommandIsGProfilers) {
  auto argv = py_spy_command("/usr/bin/py-spy", 1234, 50, std::chrono::milliseconds(2500),
                             "/w/pyspy.x.1234.col");
  std::string joined;
  for (const auto& a : argv) joined += (joined.empty() ? "" : " ") + a;
  EXPECT_EQ(joined,
            "/usr/bin/py-spy record -r 50 -d 3 --nonblocking --format raw -F --output "
            "/w/pyspy.x.1234.col -p 1234 --full-filenames --gil");
}

// Installs the fake py-spy as "py-spy" in a fresh directory put first on PATH.
class FakePySpy {
 public:
  FakePySpy() {
    std::string tmpl = (fs::temp_directory_path() / "gp-fake-pyspy-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    work_ = dir_ + "/work";
    fs::create_directory(work_);
    fs::copy_file(fixture("fake-py-spy.sh"), dir_ + "/py-spy");
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
  }
  ~FakePySpy() {
    setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  void configure(int hz, int seconds, pid_t pid, const std::string& output,
                 const std::string& fail = "") {
    std::ofstream env(dir_ + "/fake-py-spy.env");
    env << "FAKE_HZ=" << hz << "\nFAKE_SECONDS=" << seconds << "\nFAKE_PID=" << pid
        << "\nFAKE_WORK_DIR='" << work_ << "'\nFAKE_OUTPUT='" << output << "'\nFAKE_FAIL='" << fail
        << "'\n";
  }
  const std::string& work() const { return work_; }

 private:
  std::string dir_, work_, old_path_;
};

Target target_of(pid_t pid) {
  Target t;
  t.pid = pid;
  t.runtime = Runtime::python;
  t.comm = "python3";
  return t;
}

TEST(RuntimePythonPySpy, UnavailableWithoutPySpyOnPath) {
  std::string old = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);
  auto adapter = make_py_spy_adapter();
  EXPECT_EQ(adapter->unavailable_reason(), "py-spy is not installed (not on PATH)");
  setenv("PATH", old.c_str(), 1);
}

TEST(RuntimePythonPySpy, RunsPySpyFromPathWithGProfilersArguments) {
  FakePySpy fake;
  fake.configure(50, 2, getpid(), fixture("py_spy_raw.txt"));
  auto adapter = make_py_spy_adapter();
  EXPECT_EQ(adapter->name(), "py-spy");
  EXPECT_EQ(adapter->unavailable_reason(), "");
  SessionParams params;
  params.frequency_hz = 99;  // above gProfiler's 50 Hz limit for py-spy
  params.duration = std::chrono::milliseconds(2000);
  params.work_dir = fake.work();
  Profile p = adapter->profile(target_of(getpid()), params, {});
  EXPECT_EQ(p.error_frame, "");
  ASSERT_EQ(p.stacks.size(), 4u);
  EXPECT_EQ(p.stacks[0].frames.back().name, "compute");
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("50 Hz"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(fake.work())) << "the output file is left behind";
}

TEST(RuntimePythonPySpy, FailureBecomesAnErrorFrame) {
  FakePySpy fake;
  fake.configure(11, 1, getpid(), "", "Error: Permission Denied");
  SessionParams params;
  params.duration = std::chrono::milliseconds(1000);
  params.work_dir = fake.work();
  Profile p = make_py_spy_adapter()->profile(target_of(getpid()), params, {});
  EXPECT_TRUE(p.stacks.empty());
  EXPECT_EQ(p.error_frame.rfind("[Profiling error: py-spy exited with status 1", 0), 0u)
      << p.error_frame;
  EXPECT_NE(p.error_frame.find("Error: Permission Denied"), std::string::npos);
}

TEST(RuntimePythonPySpy, ProcessGoneBeforePySpyStarted) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // the pid is gone now
  FakePySpy fake;
  fake.configure(
      11, 1, child, "",
      "Error: Failed to get process executable name. Check that the process is running.");
  SessionParams params;
  params.duration = std::chrono::milliseconds(1000);
  params.work_dir = fake.work();
  Profile p = make_py_spy_adapter()->profile(target_of(child), params, {});
  EXPECT_EQ(p.error_frame, "[Profiling error: process exited before py-spy started]");
}

}  // namespace
}  // namespace gp::runtime::python
