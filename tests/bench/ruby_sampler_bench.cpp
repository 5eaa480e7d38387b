// Cost of gp's Ruby sampler (sampler_bench_main.h): its CPU time per snapshot of PID.
// Usage: gp_ruby_sampler_bench PID SECONDS HZ   (run by ruby_sampler_bench.sh)
#include "runtime/ruby/ruby_sampler.h"
#include "sampler_bench_main.h"

int main(int argc, char** argv) {
  using namespace gp::runtime::ruby;
  return gp::bench::sampler_bench_main<RubySampler, AttachFailure, std::vector<RubyThreadSample>>(
      argc, argv, "ruby", "GVL holders",
      [](const std::vector<RubyThreadSample>& threads, uint64_t& frames, uint64_t& holders) {
        for (const auto& t : threads) {
          frames += t.frames.size();
          holders += t.holds_gvl;
        }
      });
}
