// Cost of gp's PHP sampler: attaches to PID and takes snapshots for SECONDS at HZ (0 = back to
// back), then prints the sampler's own CPU time per snapshot and per frame.
// Usage: gp_php_sampler_bench PID SECONDS HZ   (run by php_sampler_bench.sh)
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "runtime/php/php_sampler.h"

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gp::runtime::php;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PID SECONDS HZ\n", argv[0]);
    return 2;
  }
  pid_t pid = std::atoi(argv[1]);
  double seconds = std::atof(argv[2]);
  int hz = std::atoi(argv[3]);
  auto attached = PhpSampler::attach(pid);
  if (auto* f = std::get_if<AttachFailure>(&attached)) {
    std::fprintf(stderr, "attach failed: %s\n", f->reason.c_str());
    return 1;
  }
  auto& sampler = *std::get<std::unique_ptr<PhpSampler>>(attached);
  std::vector<PhpFrame> frames;
  uint64_t frame_count = 0;
  auto start = std::chrono::steady_clock::now();
  auto end = start + std::chrono::duration<double>(seconds);
  double cpu0 = thread_cpu_seconds();
  for (auto tick = start; std::chrono::steady_clock::now() < end;) {
    if (hz > 0) {
      tick += std::chrono::microseconds(1000000 / hz);
      std::this_thread::sleep_until(tick);
    }
    if (sampler.sample(frames) == gp::runtime::remote::WalkStatus::ok) frame_count += frames.size();
  }
  double cpu = thread_cpu_seconds() - cpu0;
  const auto& st = sampler.stats();
  uint64_t n = st.snapshots;
  std::printf("php %s, %s Hz, %.1f s\n", sampler.interpreter().version.text().c_str(),
              hz > 0 ? argv[3] : "max", seconds);
  std::printf("  snapshots %llu  torn retries %llu  dropped ticks %llu\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(st.torn),
              static_cast<unsigned long long>(st.given_up));
  if (n > 0) {
    std::printf("  per snapshot: %.1f us cpu, %.1f frames, %.1f reads\n",
                cpu * 1e6 / static_cast<double>(n), static_cast<double>(frame_count) / n,
                static_cast<double>(sampler.reads()) / n);
    std::printf("  sampler cpu: %.3f%% of one core\n", cpu * 100.0 / seconds);
  }
  return 0;
}
