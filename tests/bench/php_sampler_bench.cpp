// Cost of gp's PHP sampler (sampler_bench_main.h): its CPU time per snapshot of PID.
// Usage: gp_php_sampler_bench PID SECONDS HZ   (run by php_sampler_bench.sh)
#include "runtime/php/php_sampler.h"
#include "sampler_bench_main.h"

int main(int argc, char** argv) {
  using namespace gp::runtime::php;
  return gp::bench::sampler_bench_main<PhpSampler, AttachFailure, std::vector<PhpFrame>>(
      argc, argv, "php", nullptr,
      [](const std::vector<PhpFrame>& stack, uint64_t& frames, uint64_t&) {
        frames += stack.size();
      });
}
