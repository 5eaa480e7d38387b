// Times a system-wide capture snapshot as gp-record does it at start-up: every process's
// metadata and executable mappings with build-ids (one shared BuildIdCache), then without the
// cache, then loading /proc/kallsyms. Prints figures; run as root to see every process.
//   gp_snapshot_bench [rounds]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gp/proc/kallsyms.h"
#include "gp/proc/process.h"

namespace {

struct Figures {
  size_t processes = 0, exited = 0, mappings = 0, with_build_id = 0;
  double ms = 0;
};

Figures snapshot_all(const std::vector<int32_t>& pids, gp::proc::BuildIdCache* cache) {
  Figures f;
  const auto t0 = std::chrono::steady_clock::now();
  for (int32_t pid : pids) {
    auto p = gp::proc::snapshot_process(pid);
    auto maps = gp::proc::executable_mappings(pid, {}, cache);
    if (!p || !maps) {
      ++f.exited;
      continue;
    }
    ++f.processes;
    f.mappings += maps->size();
    for (const auto& m : *maps) f.with_build_id += m.build_id.empty() ? 0 : 1;
  }
  f.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

void print(const char* label, const Figures& f) {
  std::printf(
      "%-22s %5zu processes (%zu gone) %6zu exec mappings (%zu with build-id)  %8.1f ms  %6.3f "
      "ms/process\n",
      label, f.processes, f.exited, f.mappings, f.with_build_id, f.ms,
      f.processes ? f.ms / static_cast<double>(f.processes) : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const std::vector<int32_t> pids = gp::proc::list_processes();
  for (int r = 0; r < rounds; ++r) {
    gp::proc::BuildIdCache cache;
    print("shared cache, cold:", snapshot_all(pids, &cache));
    print("shared cache, warm:", snapshot_all(pids, &cache));
    std::printf("%-22s %zu files parsed, %llu hits, %llu misses\n", "cache:", cache.size(),
                static_cast<unsigned long long>(cache.hits()),
                static_cast<unsigned long long>(cache.misses()));
    print("no shared cache:", snapshot_all(pids, nullptr));
    const auto t0 = std::chrono::steady_clock::now();
    auto k = gp::proc::KallsymsTable::load();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (k) {
      std::printf("%-22s %zu code symbols in %.1f ms\n", "kallsyms load:", k->size(), ms);
    } else {
      std::printf("%-22s %s\n", "kallsyms load:", k.error().message.c_str());
    }
  }
  return 0;
}
