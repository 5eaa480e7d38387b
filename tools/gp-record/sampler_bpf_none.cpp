// Built instead of sampler_bpf.cpp when gp is configured with GP_BUILD_BPF=OFF.
#include "sampler.h"

namespace gp::record_tool {

Result<std::unique_ptr<Sampler>> open_bpf_sampler(const SamplerConfig&, std::string* hint) {
  *hint = "use --sampler perf, or rebuild gp with -DGP_BUILD_BPF=ON";
  return make_error("cannot use the BPF sampler: gp-record was built without BPF support");
}

}  // namespace gp::record_tool
