// gp's PHP sampler (libcore/src/runtime/php): the version read from an interpreter's data, the
// Zend 8.2 layout table checked against PHP 8.2's own headers, and snapshots of live `php`
// processes compared with what PHP itself reports (debug_backtrace()), with the bounds on depth
// and strings and a corrupted execute_data chain.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gp/util/json.h"
#include "runtime/php/php_layout.h"
#include "runtime/php/php_sampler.h"

extern "C" {
extern const unsigned gp_zend82_api_no, gp_zend82_eg_current_execute_data, gp_zend82_ex_opline,
    gp_zend82_ex_func, gp_zend82_ex_prev, gp_zend82_fn_type, gp_zend82_fn_name, gp_zend82_fn_scope,
    gp_zend82_fn_filename, gp_zend82_fn_line_start, gp_zend82_op_lineno, gp_zend82_str_len,
    gp_zend82_str_val, gp_zend82_ce_name, gp_zend82_user_function, gp_zend82_internal_function,
    gp_zend82_eval_code, gp_zend82_sizeof_op_lineno, gp_zend82_sizeof_str_len,
    gp_zend82_sizeof_fn_type;
}

namespace gp::runtime::php {
namespace {

const char* kPhp = "/usr/bin/php8.2";

// --- versions and layouts --------------------------------------------------------------------

TEST(RuntimePhpVersion, ReadFromThePoweredByHeaderText) {
  using namespace std::string_view_literals;
  auto v = version_from_rodata("junk\0X-Powered-By: PHP/8.2.36\0more"sv);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text(), "8.2.36");
  v = version_from_rodata("X-Powered-By: PHP/8.3.0-dev\0"sv);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text(), "8.3.0");
  v = version_from_rodata("X-Powered-By: PHP/7.4"sv);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text(), "7.4");
  EXPECT_FALSE(version_from_rodata("X-Powered-By: PHP/x.2"sv));
  EXPECT_FALSE(version_from_rodata("X-Powered-By: PHP/8"sv));
  EXPECT_FALSE(version_from_rodata("PHP 8.2.36"sv));
}

TEST(RuntimePhpVersion, ReadFromTheInstalledInterpreter) {
  std::ifstream in(kPhp, std::ios::binary);
  ASSERT_TRUE(in) << kPhp << " is not installed (scripts/install-deps.sh --test)";
  std::stringstream ss;
  ss << in.rdbuf();
  auto v = version_from_rodata(ss.str());
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 8);
  EXPECT_EQ(v->minor, 2);
  EXPECT_GE(v->micro, 0);
}

TEST(RuntimePhpLayout, TheGeneratedVersionsHaveALayoutAndNoOtherDoes) {
  for (auto [major, minor] : {std::pair{7, 4}, {8, 2}, {8, 4}, {8, 5}}) {
    auto l = layout_for_version(major, minor);
    ASSERT_TRUE(l) << major << "." << minor;
    EXPECT_EQ(l->major, major);
    EXPECT_EQ(l->minor, minor);
    EXPECT_GT(l->api_no, 20190000u);
  }
  for (auto [major, minor] : {std::pair{7, 3}, {8, 0}, {8, 1}, {8, 3}, {8, 6}, {9, 2}})
    EXPECT_FALSE(layout_for_version(major, minor)) << major << "." << minor;
  EXPECT_EQ(supported_versions(), "7.4, 8.2, 8.4, 8.5");
}

TEST(RuntimePhpLayout, AVersionTextWithoutItsModuleApiIsNotBelieved) {
  using namespace std::string_view_literals;
  PhpLayout l = *layout_for_version(8, 2);
  EXPECT_TRUE(rodata_has_api("x\0API20220829,NTS\0y"sv, l));
  EXPECT_FALSE(rodata_has_api("x\0API20190902,NTS\0y"sv, l));  // 7.4's engine saying 8.2
  EXPECT_FALSE(rodata_has_api("X-Powered-By: PHP/8.2.1"sv, l));
}

TEST(RuntimePhpLayout, Php82TableMatchesTheZendHeaders) {
#ifdef GP_PHP82_HEADERS_MISSING
  FAIL() << "PHP 8.2's Zend headers (/usr/include/php/20220829) are not installed: run "
            "scripts/install-deps.sh --test (php8.2-dev)";
#else
  ASSERT_EQ(gp_zend82_api_no, 20220829u);
  PhpLayout l = *layout_for_version(8, 2);
  EXPECT_EQ(l.eg_current_execute_data, gp_zend82_eg_current_execute_data);
  EXPECT_EQ(l.ex_opline, gp_zend82_ex_opline);
  EXPECT_EQ(l.ex_func, gp_zend82_ex_func);
  EXPECT_EQ(l.ex_prev, gp_zend82_ex_prev);
  EXPECT_GE(l.ex_size, std::max({l.ex_opline, l.ex_func, l.ex_prev}) + 8);
  EXPECT_EQ(l.fn_type, gp_zend82_fn_type);
  EXPECT_EQ(gp_zend82_sizeof_fn_type, 1u);
  EXPECT_EQ(l.fn_name, gp_zend82_fn_name);
  EXPECT_EQ(l.fn_scope, gp_zend82_fn_scope);
  EXPECT_EQ(l.fn_filename, gp_zend82_fn_filename);
  EXPECT_EQ(l.fn_line_start, gp_zend82_fn_line_start);
  EXPECT_GE(l.fn_size,
            std::max({l.fn_name + 8, l.fn_scope + 8, l.fn_filename + 8, l.fn_line_start + 4}));
  EXPECT_EQ(l.op_lineno, gp_zend82_op_lineno);
  EXPECT_EQ(gp_zend82_sizeof_op_lineno, 4u);
  EXPECT_EQ(l.str_len, gp_zend82_str_len);
  EXPECT_EQ(gp_zend82_sizeof_str_len, 8u);
  EXPECT_EQ(l.str_val, gp_zend82_str_val);
  EXPECT_EQ(l.ce_name, gp_zend82_ce_name);
  EXPECT_EQ(kUserFunction, gp_zend82_user_function);
  EXPECT_EQ(kInternalFunction, gp_zend82_internal_function);
  EXPECT_EQ(kEvalCode, gp_zend82_eval_code);
#endif
}

TEST(RuntimePhpFrame, TextIsPhpspys) {
  EXPECT_EQ((PhpFrame{"Shop::price", "/srv/a.php", 17}).text(), "Shop::price /srv/a.php:17");
  EXPECT_EQ((PhpFrame{"usort", "", -1}).text(), "usort <internal>:-1");
  EXPECT_EQ((PhpFrame{"<main>", "/srv/my dir/a.php", 3}).text(), "<main> /srv/my dir/a.php:3");
}

// --- live processes --------------------------------------------------------------------------

// A php process: `php -n ARGS... READY_FILE`; it is ready when READY_FILE exists.
class PhpProcess {
 public:
  explicit PhpProcess(std::vector<std::string> args)
      : dir_(std::filesystem::temp_directory_path() /
             ("gp-php-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    std::filesystem::create_directories(dir_);
    ready_ = (dir_ / "ready").string();
    args.insert(args.begin(), {kPhp, "-n"});
    args.push_back(ready_);
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      int devnull = ::open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      execv(kPhp, argv.data());
      _exit(127);
    }
  }
  ~PhpProcess() {
    kill_now();
    std::filesystem::remove_all(dir_);
  }
  bool wait_ready() {
    for (int i = 0; i < 6000; ++i) {
      if (std::filesystem::exists(ready_)) return true;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void kill_now() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  pid_t pid() const { return pid_; }
  const std::string& ready_file() const { return ready_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string ready_;
  pid_t pid_ = -1;
};

std::unique_ptr<PhpSampler> attach(pid_t pid, WalkLimits limits = {}) {
  auto attached = PhpSampler::attach(pid, "/proc", limits);
  if (auto* failure = std::get_if<AttachFailure>(&attached)) {
    ADD_FAILURE() << failure->reason;
    return nullptr;
  }
  return std::move(std::get<std::unique_ptr<PhpSampler>>(attached));
}

std::string texts(const std::vector<PhpFrame>& frames) {
  std::string s;
  for (const auto& f : frames) s += f.text() + "\n";
  return s;
}

// The stack PHP reports at its spin point (target.php's trace file), in phpspy's frame texts,
// root first: a frame's name from its debug_backtrace() entry, its location from the entry of
// the frame it called (none when it is internal), the leaf at the spin line.
std::vector<std::string> expected_from_backtrace(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = json::parse(ss.str());
  EXPECT_TRUE(doc) << ss.str();
  if (!doc) return {};
  const auto& trace = doc->find("trace")->items;
  auto location = [](const json::Value& e) {
    const json::Value* file = e.find("file");
    return file == nullptr ? std::string("<internal>:-1")
                           : file->text + ":" + std::to_string(e.find("line")->as_int());
  };
  std::vector<std::string> leaf_first;
  for (size_t k = 0; k < trace.size(); ++k) {
    const json::Value& e = trace[k];
    std::string fn = e.get_string("function");
    if (fn == "include" || fn == "require" || fn == "include_once" || fn == "require_once")
      fn = "<main>";
    std::string cls = e.get_string("class");
    std::string name = cls.empty() ? fn : cls + "::" + fn;
    std::string where =
        k == 0 ? doc->get_string("file") + ":" + std::to_string(doc->find("line")->as_int())
               : location(trace[k - 1]);
    leaf_first.push_back(name + " " + where);
  }
  leaf_first.push_back("<main> " + location(trace.back()));
  return {leaf_first.rbegin(), leaf_first.rend()};
}

TEST(RuntimePhpSampler, StackMatchesDebugBacktrace) {
  PhpProcess target({std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/php/target.php"});
  ASSERT_TRUE(target.wait_ready());
  std::vector<std::string> want = expected_from_backtrace(target.ready_file());
  ASSERT_EQ(want.size(), 11u);
  auto sampler = attach(target.pid());
  ASSERT_TRUE(sampler);
  EXPECT_EQ(sampler->interpreter().version.major, 8);
  EXPECT_EQ(sampler->interpreter().version.minor, 2);
  std::vector<PhpFrame> frames;
  int matched = 0;
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(sampler->sample(frames, 10), WalkStatus::ok) << sampler->last_problem();
    // The loop calls max(): that internal frame is the leaf while it runs.
    if (!frames.empty() && frames.back().name == "max") {
      EXPECT_EQ(frames.back().text(), "max <internal>:-1");
      frames.pop_back();
    }
    std::vector<std::string> got;
    for (const auto& f : frames) got.push_back(f.text());
    EXPECT_EQ(got, want) << texts(frames);
    matched += got == want;
  }
  EXPECT_EQ(matched, 20);
}

// deep_function_name(n) recurses n times, then sleeps: <main>, n + 1 user frames and sleep().
const char* kRecursion =
    "function deep_function_name($n, $ready) { if ($n > 0) return deep_function_name($n - 1, "
    "$ready); touch($ready); sleep(100000); }\n"
    "deep_function_name(40, $argv[1]);";

TEST(RuntimePhpSampler, DepthAndStringLengthsAreBounded) {
  PhpProcess target({"-r", kRecursion, "--"});
  ASSERT_TRUE(target.wait_ready());
  auto sampler = attach(target.pid(), WalkLimits{.max_depth = 5, .max_string = 4});
  ASSERT_TRUE(sampler);
  std::vector<PhpFrame> frames;
  ASSERT_EQ(sampler->sample(frames, 10), WalkStatus::ok) << sampler->last_problem();
  ASSERT_EQ(frames.size(), 5u) << texts(frames);
  // Cut at the root end: the leaf side is kept.
  EXPECT_EQ(frames.back().text(), "slee <internal>:-1");
  EXPECT_EQ(frames.front().name, "deep");
  EXPECT_EQ(frames.front().file, "Comm");  // "Command line code", cut at 4 bytes

  auto whole = attach(target.pid());
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->sample(frames, 10), WalkStatus::ok) << whole->last_problem();
  ASSERT_EQ(frames.size(), 43u) << texts(frames);
  // `php -r` code is eval()'d code: no file of its own, shown as phpspy does.
  EXPECT_EQ(frames.front().text(), "<main> <internal>:-1");
  EXPECT_EQ(frames[1].text(), "deep_function_name Command line code:1");
  EXPECT_EQ(frames[41].text(), "deep_function_name Command line code:1");
}

TEST(RuntimePhpSampler, TimePerSnapshotIsBounded) {
  PhpProcess target({"-r", kRecursion, "--"});
  ASSERT_TRUE(target.wait_ready());
  // No time at all: the walk gives up before its first frame, every time.
  auto sampler = attach(target.pid(), WalkLimits{.max_time = std::chrono::microseconds(0)});
  ASSERT_TRUE(sampler);
  std::vector<PhpFrame> frames;
  EXPECT_EQ(sampler->sample(frames, 2), WalkStatus::torn);
  EXPECT_EQ(sampler->last_problem(), "one snapshot took longer than 0 us");
  EXPECT_EQ(sampler->stats().torn, 3u);
  EXPECT_EQ(sampler->stats().given_up, 1u);
}

// Overwrites 8 bytes of the target's memory through /proc/PID/mem.
bool poke(pid_t pid, uint64_t address, uint64_t value) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDWR);
  if (fd < 0) return false;
  bool ok = ::pwrite(fd, &value, sizeof value, static_cast<off_t>(address)) == sizeof value;
  ::close(fd);
  return ok;
}

TEST(RuntimePhpSampler, CorruptedExecuteDataChainIsTornWithAReason) {
  PhpProcess target({"-r", kRecursion, "--"});
  ASSERT_TRUE(target.wait_ready());
  auto sampler = attach(target.pid());
  ASSERT_TRUE(sampler);
  PhpLayout l = *layout_for_version(8, 2);
  // The deepest user frame (the leaf is sleep()'s frame, whose caller is deep_function_name(0)):
  // its prev_execute_data now points into unmapped memory.
  uint64_t ex = 0, caller = 0;
  remote::RemoteMemory memory(target.pid());
  ASSERT_TRUE(
      memory.read_value(sampler->interpreter().executor_globals + l.eg_current_execute_data, ex));
  ASSERT_TRUE(memory.read_value(ex + l.ex_prev, caller));
  uint64_t grand_caller = 0;
  ASSERT_TRUE(memory.read_value(caller + l.ex_prev, grand_caller));
  ASSERT_TRUE(poke(target.pid(), caller + l.ex_prev, 0x10));
  std::vector<PhpFrame> frames;
  EXPECT_EQ(sampler->sample(frames, 2), WalkStatus::torn);
  EXPECT_EQ(sampler->stats().given_up, 1u);
  EXPECT_EQ(sampler->last_problem().rfind("cannot read execute_data (depth 2) at 0x10: ", 0), 0u)
      << sampler->last_problem();
  // A chain that loops back on itself is torn too, not an endless walk.
  ASSERT_TRUE(poke(target.pid(), caller + l.ex_prev, caller));
  EXPECT_EQ(sampler->sample(frames, 0), WalkStatus::torn);
  EXPECT_NE(sampler->last_problem().find("is its own caller"), std::string::npos)
      << sampler->last_problem();
  // A function pointer to something that is no zend_function.
  ASSERT_TRUE(poke(target.pid(), caller + l.ex_prev, grand_caller));
  ASSERT_TRUE(sampler->sample(frames, 0) == WalkStatus::ok) << sampler->last_problem();
  ASSERT_TRUE(poke(target.pid(), caller + l.ex_func, caller));
  EXPECT_EQ(sampler->sample(frames, 0), WalkStatus::torn);
  EXPECT_NE(sampler->last_problem().find("(not user, internal or eval code)"), std::string::npos)
      << sampler->last_problem();
  // A chain that ends at an internal function (sleep() without its caller) is a call caught
  // while it was set up.
  ASSERT_TRUE(poke(target.pid(), ex + l.ex_prev, 0));
  EXPECT_EQ(sampler->sample(frames, 0), WalkStatus::torn);
  EXPECT_EQ(sampler->last_problem(), "the outermost frame is an internal function (sleep)");
}

TEST(RuntimePhpSampler, NoPhpCodeRunningIsAnEmptyStack) {
  // Reading a script from a pipe that stays open: the engine waits before any PHP code runs.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], 0);
    ::close(fds[1]);
    execl(kPhp, kPhp, "-n", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(fds[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto sampler = attach(pid);
  std::vector<PhpFrame> frames{{"x", "y", 1}};
  if (sampler) {
    EXPECT_EQ(sampler->sample(frames), WalkStatus::ok) << sampler->last_problem();
  }
  EXPECT_TRUE(frames.empty()) << texts(frames);
  ::kill(pid, SIGKILL);
  ::close(fds[1]);
  waitpid(pid, nullptr, 0);
}

TEST(RuntimePhpSampler, AttachFailures) {
  // Not PHP: a process whose executable is no PHP engine.
  pid_t sleeper = fork();
  if (sleeper == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto attached = PhpSampler::attach(sleeper);
  auto* failure = std::get_if<AttachFailure>(&attached);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, AttachFailure::Kind::not_php);
  EXPECT_EQ(failure->reason,
            "no PHP engine in the process: '/usr/bin/sleep' has no PHP version "
            "in its data");
  ::kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  // Gone: the pid was reaped.
  attached = PhpSampler::attach(sleeper);
  failure = std::get_if<AttachFailure>(&attached);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, AttachFailure::Kind::gone);
}

TEST(RuntimePhpSampler, ProcessExitingBetweenSnapshotsIsGone) {
  PhpProcess target({"-r", kRecursion, "--"});
  ASSERT_TRUE(target.wait_ready());
  auto sampler = attach(target.pid());
  ASSERT_TRUE(sampler);
  target.kill_now();
  std::vector<PhpFrame> frames;
  EXPECT_EQ(sampler->sample(frames), WalkStatus::gone);
}

}  // namespace
}  // namespace gp::runtime::php
