# gp-runtime's Python adapters (libcore/src/runtime/python): line tables, layouts and version
# detection; gp's CPython sampler against live interpreters; py-spy output and command.
target_sources(gp_unit_tests PRIVATE
  unit/runtime_python_debug_offsets_test.cpp
  unit/runtime_python_frame_walker_test.cpp
  unit/runtime_python_gp_adapter_test.cpp
  unit/runtime_python_line_table_test.cpp
  unit/runtime_python_package_test.cpp
  unit/runtime_python_py_spy_test.cpp
  unit/runtime_python_pyperf_name_test.cpp
  unit/runtime_python_walker_test.cpp
)
target_include_directories(gp_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)

# Benchmark (not a test): the CPython sampler's own cost, run by bench/python_sampler_bench.sh.
add_executable(gp_python_sampler_bench bench/python_sampler_bench.cpp)
target_include_directories(gp_python_sampler_bench PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)
target_link_libraries(gp_python_sampler_bench PRIVATE gp_core)

# Test helper (not a test): one snapshot by gp's CPython sampler, for the version matrix in
# cli/gp-runtime-python-versions.bats.
add_executable(gp_python_stacks helpers/python_stacks.cpp)
target_include_directories(gp_python_stacks PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)
target_link_libraries(gp_python_stacks PRIVATE gp_core)
