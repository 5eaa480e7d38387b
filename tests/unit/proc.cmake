# Process capture tests (libcore/src/proc). They use the ELF fixtures of elf.cmake.
target_sources(gp_unit_tests PRIVATE
  unit/container_test.cpp
  unit/kallsyms_test.cpp
  unit/mappings_test.cpp
  unit/perf_map_test.cpp
  unit/process_cmdline_test.cpp
  unit/process_host_test.cpp
  unit/process_test.cpp
)
target_link_libraries(gp_unit_tests PRIVATE ${CMAKE_DL_LIBS})

# Benchmark (not a test): time of a system-wide snapshot, run by hand.
add_executable(gp_snapshot_bench bench/snapshot_bench.cpp)
target_link_libraries(gp_snapshot_bench PRIVATE gp_core)
