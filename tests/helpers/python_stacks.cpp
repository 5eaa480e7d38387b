// Test helper (not installed): one snapshot of a CPython process by gp's own sampler, printed
// in the record format of tests/fixtures/runtime/python/chain.py's report, so a test compares
// what gp reads with what the interpreter reports: per thread "thread <tid as gp sees it>",
// then "frame <name> <file> <first line> <current line>" root first.
// Usage: gp_python_stacks PID      exit 1 (with the reason on stderr) when gp refuses the process
#include <cstdio>
#include <cstdlib>

#include "runtime/python/python_sampler.h"

int main(int argc, char** argv) {
  using namespace gp::runtime::python;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PID\n", argv[0]);
    return 2;
  }
  auto attached = PythonSampler::attach(std::atoi(argv[1]));
  if (auto* failure = std::get_if<AttachFailure>(&attached)) {
    std::fprintf(stderr, "gp_python_stacks: error: %s\n", failure->reason.c_str());
    return 1;
  }
  auto& sampler = *std::get<std::unique_ptr<PythonSampler>>(attached);
  std::vector<ThreadSample> threads;
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (sampler.sample(threads, 10) != WalkStatus::ok) continue;
    std::printf("version %s\n", sampler.interpreter().version.text().c_str());
    for (const auto& t : threads) {
      std::printf("thread %d\n", t.native_tid);
      for (const auto& f : t.frames)
        std::printf("frame %s %s %u %u\n", f.name.c_str(), f.file.c_str(), f.first_line, f.line);
    }
    return 0;
  }
  std::fprintf(stderr, "gp_python_stacks: error: every snapshot was torn\n");
  return 1;
}
