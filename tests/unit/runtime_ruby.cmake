# gp-runtime's Ruby sampler (libcore/src/runtime/ruby): layouts and line-number decoding, and
# the sampler and gp-ruby adapter against live Debian ruby processes.
target_sources(gp_unit_tests PRIVATE
  unit/runtime_ruby_layout_test.cpp
  unit/runtime_ruby_walker_test.cpp
)
target_include_directories(gp_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)

# Benchmark (not a test): the Ruby sampler's own cost, run by bench/ruby_sampler_bench.sh.
add_executable(gp_ruby_sampler_bench bench/ruby_sampler_bench.cpp)
target_include_directories(gp_ruby_sampler_bench PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)
target_link_libraries(gp_ruby_sampler_bench PRIVATE gp_core)
