// gp-runtime's Node adapters against real Node processes running chain.js.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "gp/runtime/adapters.h"
#include "runtime/node/cpu_profile.h"
#include "runtime/node/inspector.h"
#include "runtime/node/node_target.h"
#include "runtime_node_support.h"

namespace gp::test::runtime_node {
namespace {

using namespace std::chrono_literals;
using runtime::node::perf_map_flag;

runtime::Target target_of(const NodeProcess& node) {
  runtime::Target t;
  t.pid = node.pid();
  t.runtime = runtime::Runtime::node;
  t.comm = "node";
  t.cmdline = node.cmdline();
  t.root = "/proc/" + std::to_string(node.pid()) + "/root";
  return t;
}

runtime::SessionParams params_for(std::chrono::milliseconds duration, const std::string& mode) {
  runtime::SessionParams p;
  p.frequency_hz = 99;
  p.duration = duration;
  p.mode = mode;
  return p;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Map lines naming a JS function of chain.js, e.g. "7fe7da7c78c0 6d8 JS:*spin /.../chain.js:12:14".
size_t map_lines_naming(const std::string& map, const std::string& fn) {
  size_t n = 0;
  std::istringstream in(map);
  for (std::string line; std::getline(in, line);) {
    if (line.find(fn + " ") != std::string::npos && line.find("chain.js") != std::string::npos) ++n;
  }
  return n;
}

TEST(NodePerfFlag, FoundInNodeOptionsAndEnvironmentOnly) {
  EXPECT_EQ(perf_map_flag({"node", "--perf-basic-prof", "app.js"}, ""), "--perf-basic-prof");
  EXPECT_EQ(perf_map_flag({"node", "--perf_basic_prof_only_functions", "app.js"}, ""),
            "--perf-basic-prof-only-functions");
  EXPECT_EQ(perf_map_flag({"node", "-r", "x", "--perf-basic-prof", "app.js"}, ""),
            "--perf-basic-prof");
  // After the script the words are the script's own arguments.
  EXPECT_EQ(perf_map_flag({"node", "app.js", "--perf-basic-prof"}, ""), "");
  EXPECT_EQ(perf_map_flag({"node", "-e", "1", "--perf-basic-prof"}, ""), "");
  EXPECT_EQ(perf_map_flag({"node", "app.js"}, "--max-old-space-size=64 --perf-basic-prof"),
            "--perf-basic-prof");
  EXPECT_EQ(perf_map_flag({"node", "--perf-prof", "app.js"}, ""), "");  // jitdump, not a map
}

TEST(NodePerfAdapter, WarnsOnlyForANodeWithoutThePerfFlag) {
  GP_REQUIRE_NODE();
  NodeProcess plain = NodeProcess::start({});
  NodeProcess by_env = NodeProcess::start({}, "--perf-basic-prof");
  ASSERT_TRUE(plain.ready() && by_env.ready());
  auto adapter = runtime::make_node_perf_adapter();
  auto p1 = adapter->profile(target_of(plain), params_for(100ms, "perf"), {});
  ASSERT_EQ(p1.warnings.size(), 1u);
  EXPECT_NE(p1.warnings[0].find("without --perf-basic-prof"), std::string::npos);
  auto p2 = adapter->profile(target_of(by_env), params_for(100ms, "perf"), {});
  EXPECT_TRUE(p2.warnings.empty());
  EXPECT_TRUE(p1.stacks.empty() && p2.stacks.empty() && p1.error_frame.empty());
  // NODE_OPTIONS made that node create its map (V8 buffers the lines): the reading is right.
  EXPECT_EQ(::access(by_env.map_path().c_str(), F_OK), 0);
  EXPECT_NE(::access(plain.map_path().c_str(), F_OK), 0);
}

TEST(NodeAttachMaps, WritesJsNamesDuringTheSessionAndLeavesTheProcessAsFound) {
  GP_REQUIRE_NODE();
  NodeProcess node = NodeProcess::start({});
  ASSERT_TRUE(node.ready());
  auto before = runtime::node::listening_ports(node.pid());
  ASSERT_TRUE(before.ok() && before->empty());
  auto adapter = runtime::make_node_attach_maps_adapter();
  ASSERT_EQ(adapter->unavailable_reason(), "");
  for (int round = 0; round < 2; ++round) {  // a second session loads the addon again
    auto p = adapter->profile(target_of(node), params_for(1500ms, "attach-maps"), {});
    EXPECT_EQ(p.error_frame, "") << round;
    EXPECT_TRUE(p.warnings.empty()) << (p.warnings.empty() ? "" : p.warnings[0]);
    const std::string map = read_text(node.map_path());
    EXPECT_GT(map_lines_naming(map, "spin"), 0u) << round;
    EXPECT_GT(map_lines_naming(map, "work"), 0u) << round;
    auto after = runtime::node::listening_ports(node.pid());
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(after->empty()) << "the inspector gp opened is still listening";
  }
  // Off again: code compiled from now on is not written.
  const auto size = read_text(node.map_path()).size();
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(read_text(node.map_path()).size(), size);
  EXPECT_EQ(::kill(node.pid(), 0), 0) << "the target survived";
}

TEST(NodeAttachMaps, StopsEarlyWhenAskedAndStillCleansUp) {
  GP_REQUIRE_NODE();
  NodeProcess node = NodeProcess::start({});
  ASSERT_TRUE(node.ready());
  auto adapter = runtime::make_node_attach_maps_adapter();
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(3s);
    stop.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto p = adapter->profile(target_of(node), params_for(60s, "attach-maps"), stop.get_token());
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  EXPECT_EQ(p.error_frame, "");
  auto after = runtime::node::listening_ports(node.pid());
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
}

TEST(NodeInspector, RefusesToSignalANonNodeProcess) {
  NodeProcess none;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp("sleep", "sleep", "30", nullptr);
    ::_exit(127);
  }
  std::this_thread::sleep_for(200ms);
  auto s = runtime::node::open_inspector(pid, deadline_in(2));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not a node executable"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(::kill(pid, 0), 0) << "SIGUSR1 would have killed sleep";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

bool has_chain(const runtime::Stack& st) {
  for (size_t i = 0; i + 2 < st.frames.size(); ++i) {
    if (st.frames[i].name == "main" && st.frames[i + 1].name == "work" &&
        st.frames[i + 2].name == "spin")
      return true;
  }
  return false;
}

TEST(NodeInspectorAdapter, SamplesTheJsCallChainAndClosesTheInspector) {
  GP_REQUIRE_NODE();
  NodeProcess node = NodeProcess::start({});
  ASSERT_TRUE(node.ready());
  auto adapter = runtime::make_node_inspector_adapter();
  auto p = adapter->profile(target_of(node), params_for(2000ms, "inspector"), {});
  ASSERT_EQ(p.error_frame, "");
  uint64_t total = 0, chain = 0;
  for (const auto& st : p.stacks) {
    total += st.count;
    if (has_chain(st)) chain += st.count;
    for (const auto& f : st.frames) EXPECT_EQ(f.kind, model::FrameKind::node);
  }
  // 99 Hz for 2 s would be ~200 samples; a loaded machine (CI shares 2 cores) delays V8's
  // sampler thread, so only a few are required. Nearly all are in spin (the script is busy).
  EXPECT_GE(total, 5u);
  EXPECT_GT(chain * 2, total) << "main;work;spin in " << chain << " of " << total;
  for (const auto& st : p.stacks) {
    if (!has_chain(st)) continue;
    const auto& spin = st.frames.back();
    EXPECT_NE(spin.file.find("chain.js"), std::string::npos);
    EXPECT_EQ(spin.start_line, 12u);  // "function spin(n) {" is line 12 of chain.js
    break;
  }
  auto after = runtime::node::listening_ports(node.pid());
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
}

TEST(NodeInspectorAdapter, ProcessThatExitsMidSessionGivesAnErrorFrame) {
  GP_REQUIRE_NODE();
  NodeProcess node = NodeProcess::start({}, {}, 3);  // exits on its own after 3 s
  ASSERT_TRUE(node.ready());
  auto adapter = runtime::make_node_inspector_adapter();
  const auto t0 = std::chrono::steady_clock::now();
  auto p = adapter->profile(target_of(node), params_for(30000ms, "inspector"), {});
  EXPECT_EQ(p.error_frame, "[Profiling error: process went down during profiling]");
  // Node waits for connected debuggers before it exits: gp must let go at once, not at the
  // end of its session.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
}

TEST(NodeCpuProfile, ConvertsNodesAndSamplesToRootFirstStacks) {
  std::ifstream in(std::string(GP_TEST_DATA_DIR) + "/fixtures/runtime/node/cpu_profile.json");
  std::stringstream text;
  text << in.rdbuf();
  auto doc = json::parse(text.str());
  ASSERT_TRUE(doc.ok());
  auto stacks = runtime::node::stacks_from_cpu_profile(*doc);
  ASSERT_TRUE(stacks.ok()) << stacks.error().message;
  std::map<std::string, uint64_t> folded;
  for (const auto& st : *stacks) {
    std::string key;
    for (const auto& f : st.frames)
      key += (key.empty() ? "" : ";") + f.name + ":" + std::to_string(f.start_line);
    folded[key] += st.count;
  }
  const std::map<std::string, uint64_t> expected = {
      {"(anonymous):1;main:48;work:41;spin:12", 3},
      {"(anonymous):1;main:48;work:41", 1},
      {"(program):0", 2},
      {"(garbage collector):0", 1},
  };  // the 2 "(idle)" samples are dropped
  EXPECT_EQ(folded, expected);
}

}  // namespace
}  // namespace gp::test::runtime_node
