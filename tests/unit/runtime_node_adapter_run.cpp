// gp_node_adapter_run: runs one of gp-runtime's Node adapters against one pid, for the bats
// suite (tests/cli/gp-runtime-node.bats) to combine with gp-record before gp-runtime's driver
// exists, and to time what attach-maps costs. Not installed.
//
//   gp_node_adapter_run <perf|attach-maps|inspector> PID SECONDS [HZ]
//
// Prints the error frame, warnings, "stacks N samples M" and the stacks on stdout; SIGTERM ends the
// session early (as gp-runtime's driver does through the stop token). Exit 0 when no error frame.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "gp/runtime/adapters.h"

namespace {

std::stop_source g_stop;
volatile sig_atomic_t g_term = 0;

std::vector<std::string> cmdline_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: gp_node_adapter_run <perf|attach-maps|inspector> PID SECONDS [HZ]\n";
    return 2;
  }
  const std::string mode = argv[1];
  std::unique_ptr<gp::runtime::Adapter> adapter =
      mode == "perf"          ? gp::runtime::make_node_perf_adapter()
      : mode == "attach-maps" ? gp::runtime::make_node_attach_maps_adapter()
                              : gp::runtime::make_node_inspector_adapter();
  gp::runtime::Target t;
  t.pid = std::atoi(argv[2]);
  t.runtime = gp::runtime::Runtime::node;
  t.cmdline = cmdline_of(t.pid);
  t.root = "/proc/" + std::to_string(t.pid) + "/root";
  gp::runtime::SessionParams params;
  params.mode = mode;
  if (argc == 5) params.frequency_hz = std::atoi(argv[4]);
  params.duration = std::chrono::milliseconds(static_cast<int64_t>(std::atof(argv[3]) * 1000));
  // The signal handler only sets a flag; a watcher thread turns it into a stop request.
  ::signal(SIGTERM, [](int) { g_term = 1; });
  std::jthread watcher([](std::stop_token done) {
    while (!done.stop_requested() && g_term == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_term != 0) g_stop.request_stop();
  });
  gp::runtime::Profile p = adapter->profile(t, params, g_stop.get_token());
  watcher.request_stop();
  uint64_t samples = 0;
  for (const auto& st : p.stacks) samples += st.count;
  if (!p.error_frame.empty()) std::cout << p.error_frame << "\n";
  for (const auto& w : p.warnings) std::cout << "warning: " << w << "\n";
  std::cout << "stacks " << p.stacks.size() << " samples " << samples << "\n";
  // GP_ADAPTER_RUN_LOCATIONS=1: each frame as NAME@FILE:START_LINE (the version matrix checks them).
  const char* with_locations = std::getenv("GP_ADAPTER_RUN_LOCATIONS");
  const bool locations = with_locations != nullptr && std::string(with_locations) == "1";
  for (const auto& st : p.stacks) {
    std::string line;
    for (const auto& f : st.frames) {
      line += (line.empty() ? "" : ";") + f.name;
      if (locations) line += "@" + f.file + ":" + std::to_string(f.start_line);
    }
    std::cout << line << " " << st.count << "\n";
  }
  return p.error_frame.empty() ? 0 : 1;
}
