#pragma once
// The driver of the benches of gp's own interpreter samplers (CPython, Ruby, PHP): attaches to
// PID, takes snapshots for SECONDS at HZ (0 = back to back), then prints the sampler's own CPU
// time per snapshot, frames and reads per snapshot, and its share of one core.
// Usage of each bench: gp_<runtime>_sampler_bench PID SECONDS HZ

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <variant>

namespace gp::bench {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// `tally(snapshot, frames, holders)` adds one good snapshot's frames and lock holders (GIL,
// GVL); `holders_label` names them in the output (nullptr: not printed).
template <typename Sampler, typename Failure, typename Snapshot, typename Tally>
int sampler_bench_main(int argc, char** argv, const char* runtime, const char* holders_label,
                       Tally tally) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PID SECONDS HZ\n", argv[0]);
    return 2;
  }
  pid_t pid = std::atoi(argv[1]);
  double seconds = std::atof(argv[2]);
  int hz = std::atoi(argv[3]);
  auto attached = Sampler::attach(pid);
  if (auto* f = std::get_if<Failure>(&attached)) {
    std::fprintf(stderr, "attach failed: %s\n", f->reason.c_str());
    return 1;
  }
  auto& sampler = *std::get<std::unique_ptr<Sampler>>(attached);
  Snapshot snapshot;
  uint64_t frames = 0, holders = 0;
  auto start = std::chrono::steady_clock::now();
  auto end = start + std::chrono::duration<double>(seconds);
  double cpu0 = thread_cpu_seconds();
  for (auto tick = start; std::chrono::steady_clock::now() < end;) {
    if (hz > 0) {
      tick += std::chrono::microseconds(1000000 / hz);
      std::this_thread::sleep_until(tick);
    }
    if (sampler.sample(snapshot) == decltype(sampler.sample(snapshot))::ok)
      tally(snapshot, frames, holders);
  }
  double cpu = thread_cpu_seconds() - cpu0;
  const auto& st = sampler.stats();
  uint64_t n = st.snapshots;
  std::printf("%s %s, %s Hz, %.1f s\n", runtime, sampler.interpreter().version.text().c_str(),
              hz > 0 ? argv[3] : "max", seconds);
  std::printf("  snapshots %llu  torn retries %llu  dropped ticks %llu\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(st.torn),
              static_cast<unsigned long long>(st.given_up));
  if (n > 0) {
    std::printf("  per snapshot: %.1f us cpu, %.1f frames, %.1f reads",
                cpu * 1e6 / static_cast<double>(n), static_cast<double>(frames) / n,
                static_cast<double>(sampler.reads()) / n);
    if (holders_label != nullptr)
      std::printf(", %.2f %s", static_cast<double>(holders) / n, holders_label);
    std::printf("\n  sampler cpu: %.3f%% of one core\n", cpu * 100.0 / seconds);
  }
  return 0;
}

}  // namespace gp::bench
