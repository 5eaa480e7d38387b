// Cost of gp's CPython sampler (sampler_bench_main.h): its CPU time per snapshot of PID.
// Usage: gp_python_sampler_bench PID SECONDS HZ   (run by python_sampler_bench.sh)
#include "runtime/python/python_sampler.h"
#include "sampler_bench_main.h"

int main(int argc, char** argv) {
  using namespace gp::runtime::python;
  return gp::bench::sampler_bench_main<PythonSampler, AttachFailure, std::vector<ThreadSample>>(
      argc, argv, "python", "GIL holders",
      [](const std::vector<ThreadSample>& threads, uint64_t& frames, uint64_t& holders) {
        for (const auto& t : threads) {
          frames += t.frames.size();
          holders += t.holds_gil;
        }
      });
}
